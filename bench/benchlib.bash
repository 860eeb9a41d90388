# SPDX-License-Identifier: MIT
# What the bench scripts share; sourced after `set -euo pipefail`.
#   bl_usage            the script's header comment (its help), exit 2
#   die MSG...          "<script>: MSG" on stderr, exit 1
#   bl_need TOOL...     die unless each TOOL is on PATH
#   median              the median of the numbers on stdin (one a line, or
#                       blank-separated; of an even count, the mean of the
#                       middle two; "-" when the smallest is "-")
#   median_of FILE COL  the median of column COL of FILE
#   bl_peer NAME        the path of scripts/peers' NAME (perf-6.12,
#                       debuginfod-find-0.192...: $DS_PEERS, default
#                       $DS_CORPUS/peers, else build-corpus/peers), or
#                       nothing when it is not there

bl_usage() {
	sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$0"
	exit 2
}

die() {
	echo "$(basename "$0" .sh): $*" >&2
	exit 1
}

bl_need() {
	local t
	for t; do
		command -v "$t" >/dev/null || die "$t not found (scripts/install-deps bench)"
	done
}

median() {
	tr ' \t' '\n\n' | sed '/^$/d' | sort -n | awk '{ v[NR] = $1 }
		END { if (!NR || v[1] == "-") print "-"; else if (NR % 2) print v[(NR + 1) / 2];
		      else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

median_of() {
	awk -v c="$2" '{ print $c }' "$1" | median
}

bl_peer() {
	local w=${DS_PEERS:-${DS_CORPUS:-${src:-.}/build-corpus}/peers}/bin/$1

	[ ! -x "$w" ] || echo "$w"
}
