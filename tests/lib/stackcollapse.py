#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The oracle of report --folded: `perf script` output collapsed by the
rules stackcollapse-perf.pl (Brendan Gregg's FlameGraph) documents and
applies by default, written here from those rules, independently of
tools/cli_folded.c:

  perf script -i perf.data | python3 stackcollapse.py [--kernel] [--dso] [--pid|--tid]

- A sample is a header line ("COMM PID[/TID] [CPU] TIME: [PERIOD] EVENT:")
  then one line per callchain entry ("ADDR SYM[+OFF] (MODULE)"), then a
  blank line.  Its stack is COMM (spaces made '_'; with --pid COMM-PID,
  --tid COMM-PID/TID: perf script must print pid and tid, -F pid,tid),
  then the entries from the last (the outermost caller) to the first.
- The count is the PERIOD when the header has one, else 1.
- Only samples of the first event seen are kept (--event-filter=EVENT:
  of that one).
- A symbol loses its "+0x..." offset; "[unknown]" becomes "[MODULE]"
  (the module's base name), or "[unknown]" when the module is unknown too.
- Tidying: ';' -> ':'; unless the name looks like a Go method
  (".(" ... ")."), everything from the first '(' that does not open
  "(anonymous namespace)" goes; quotes go; for a COMM starting with
  "java", a leading 'L' of a name with a '/' goes.
- --kernel: "_[k]" after a function whose module starts with '[' or ends
  with "vmlinux" (and is not [unknown]).
- --dso (not stackcollapse-perf.pl's: report --folded --annotate dso):
  each frame as "MODULE-BASENAME`NAME".
Stack lines whose symbol starts with '(' are dropped by stackcollapse-perf.pl
("process names"); this one keeps them, as report --folded does, and says
so on stderr (none of the tests' programs has one).
"""
import argparse
import collections
import re
import sys

HEADER = re.compile(r'^(\S.+?)\s+(\d+)(?:/(\d+))?\s+')
EVENT = re.compile(r':\s*(\d+)?\s+(\S+):\s*$')
FRAME = re.compile(r'^\s*([0-9a-fA-F]+)\s+(.+) \((.*)\)$')


def tidy(func, java):
    func = func.replace(';', ':')
    if not re.search(r'\.\(.*\)\.', func):
        at = 0
        while True:
            i = func.find('(', at)
            if i < 0:
                break
            if not func.startswith('anonymous namespace)', i + 1):
                func = func[:i]
                break
            at = i + 1
    func = func.replace('"', '').replace("'", '')
    if java and '/' in func and func.startswith('L'):
        func = func[1:]
    return func


def frame_name(sym, mod, comm, args):
    sym = re.sub(r'\+0x[0-9a-f]+$', '', sym)
    base = mod.rsplit('/', 1)[-1]
    if sym == '[unknown]':
        sym = '[%s]' % base if mod != '[unknown]' else '[unknown]'
    name = tidy(sym, comm.startswith('java'))
    if args.kernel and (mod.startswith('[') or mod.endswith('vmlinux')) and 'unknown' not in mod:
        name += '_[k]'
    if args.dso:
        name = base + '`' + name
    return name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--kernel', action='store_true')
    ap.add_argument('--dso', action='store_true')
    ap.add_argument('--pid', action='store_true')
    ap.add_argument('--tid', action='store_true')
    ap.add_argument('--event-filter', default=None)
    args = ap.parse_args()
    stacks = collections.Counter()
    event = args.event_filter
    root = None  # the sample being read; None: none, or filtered out
    count = 1
    frames = []
    paren = 0
    for line in sys.stdin:
        line = line.rstrip('\n')
        if line.startswith('#'):
            continue
        if not line.strip():
            if root is not None:
                stacks[';'.join([root] + frames[::-1])] += count
            root, frames = None, []
            continue
        m = HEADER.match(line)
        if m:
            comm, pid, tid = m.group(1), m.group(2), m.group(3)
            if tid is None:
                pid, tid = '?', pid
            e = EVENT.search(line)
            count = 1
            root = None
            frames = []
            if e:
                if event is None:
                    event = e.group(2)
                elif e.group(2) != event:
                    continue
                if e.group(1):
                    count = int(e.group(1))
            if args.tid:
                name = '%s-%s/%s' % (comm, pid, tid)
            elif args.pid:
                name = '%s-%s' % (comm, pid)
            else:
                name = comm
            root = name.replace(' ', '_')
            java = comm
            continue
        m = FRAME.match(line)
        if not m:
            print('stackcollapse.py: unrecognized line: %r' % line, file=sys.stderr)
            continue
        if root is None:
            continue
        sym, mod = m.group(2), m.group(3)
        if sym.startswith('('):
            paren += 1
        frames.append(frame_name(sym, mod, java, args))
    if root is not None:
        stacks[';'.join([root] + frames[::-1])] += count
    if paren:
        print('stackcollapse.py: kept %d frames stackcollapse-perf.pl drops' % paren,
              file=sys.stderr)
    for k in sorted(stacks):
        print('%s %d' % (k, stacks[k]))


if __name__ == '__main__':
    main()
