#!/usr/bin/env bash
# The shared library exports exactly the functions the header declares
# DS_API, under the version node of the version script, and nothing else.
set -euo pipefail
lib="$DS_BUILD/libdsostore.so"
hdr="$DS_SRC/include/dsostore.h"
declared=$(grep -v '^#' "$hdr" | tr '\n' ' ' | grep -oE 'DS_API [^;(]*\(' | grep -oE '[a-z_0-9]+ *\($' | tr -d ' (' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' | sed 's/@.*//' | sort -u)
if [ "$declared" != "$exported" ]; then
	echo "declared in the header but not exported:"; comm -23 <(echo "$declared") <(echo "$exported")
	echo "exported but not declared:"; comm -13 <(echo "$declared") <(echo "$exported")
	exit 1
fi
major=$(awk '/define DS_VERSION_MAJOR/ {print $3}' "$hdr")
minor=$(awk '/define DS_VERSION_MINOR/ {print $3}' "$hdr")
bad=$(nm -D --defined-only "$lib" | awk '$2 == "T"' | grep -vc "@@DSOSTORE_$major.$minor\$" || true)
[ "$bad" = 0 ] || { echo "$bad symbols outside DSOSTORE_$major.$minor"; exit 1; }
n=$(echo "$declared" | wc -l)
echo "abi: $n functions exported, all declared, all DSOSTORE_$major.$minor"
