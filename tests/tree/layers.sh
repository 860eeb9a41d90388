#!/usr/bin/env bash
# The library's layers (docs/layers.md) hold on the objects this build made:
# no circle among the library's or the CLI's objects, no folder using one
# its rule does not name, the CLI on the public API alone.
set -euo pipefail
command -v nm >/dev/null || { echo "no nm"; exit 77; }
exec python3 "$DS_SRC/tests/tree/layers.py" "$DS_SRC" "$DS_BUILD"
