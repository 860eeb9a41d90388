#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""folded_cmp.py THEIRS OURS: two files of collapsed stacks ("frames count"
a line, as stackcollapse-perf.pl writes them) must hold the same stacks
with the same counts, but for PLT stubs: where perf 6.1 names no stub,
our NAME@plt is its _init or [DSO]; some stubs of libc's .plt
(__tunable_get_val's) it names "@plt", and others after another entry
(docs/oracles.md): a stub of ours is then any stub of perf's.  Prints each
stack of one side only ("perf: ..." / "ours: ..."), then "plt N" (the
samples whose stacks matched through a stub's name); exit 1 when a stack
differs otherwise."""
import collections, re, sys
def read(p):
    c = collections.Counter()
    for line in open(p, encoding='utf-8', errors='surrogateescape'):
        s, n = line.rstrip('\n').rsplit(' ', 1)
        c[s] += int(n)
    return c
theirs, ours = read(sys.argv[1]), read(sys.argv[2])
only_t, only_o = theirs - ours, ours - theirs
# where perf 6.1 names no stub, our NAME@plt is its _init or [DSO]; some
# stubs of libc's .plt (__tunable_get_val's) it names "@plt", others after
# another .rela.plt entry (our *ABS*+0x9c590@plt, its __tunable_get_val@plt)
def plt_frame(o, t):
    if o == t:
        return True
    pre = o.rsplit('`', 1)[0] + '`' if '`' in o else ''
    if not o.endswith('@plt') or not t.startswith(pre):
        return False
    return re.fullmatch(r'_init|\[[^]]+\]|[^;`]*@plt', t[len(pre):]) is not None
plt = 0
for s, n in list(only_o.items()):
    if '@plt' not in s:
        continue
    fo = s.split(';')
    for t in only_t:
        ft = t.split(';')
        if only_t[t] >= n and len(ft) == len(fo) and all(map(plt_frame, fo, ft)):
            only_t[t] -= n
            del only_o[s]
            plt += n
            break
only_t += collections.Counter()
for s, n in sorted(only_t.items()):
    print('perf: %s %d' % (s, n))
for s, n in sorted(only_o.items()):
    print('ours: %s %d' % (s, n))
print('plt %d' % plt)
sys.exit(1 if only_t or only_o else 0)
