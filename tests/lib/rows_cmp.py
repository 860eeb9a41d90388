#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rows_cmp.py WANT GOT NAME: two files of report rows, "SHARE% KEY..." a
line (KEY: the rest of the line, e.g. DSO and symbol), must hold the same
keys with the same shares to 0.01 points (one unit of perf's last digit).
Prints each difference as "  NAME: KEY: want W, ours O" on stderr; exit 1
if any."""
import sys


def rows(path):
    d = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 2:
            d[" ".join(f[1:])] = float(f[0].rstrip("%"))
    return d


want, got = rows(sys.argv[1]), rows(sys.argv[2])
bad = [k for k in want if k not in got or abs(want[k] - got[k]) > 0.0100001]
bad += [k for k in got if k not in want]
for k in bad[:20]:
    print("  %s: %s: want %s, ours %s" % (sys.argv[3], k, want.get(k), got.get(k)), file=sys.stderr)
sys.exit(1 if bad else 0)
