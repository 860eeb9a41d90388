#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Read a profile written by `dsostore report --pprof` back with go tool
pprof and compare it with independent tools (tests/cli/pprof.sh).

  pprof_cmp.py traces PB PERF.DATA [--no-inline] [--sample-index NAME [--event EV]]
      `go tool pprof -traces` of PB against `perf script` of PERF.DATA:
      the same stacks (function names, leaf first), as many times, for
      the same thread (name, pid, tid).  perf 6.1 prints no inline frames
      in callchains, so binutils `addr2line -i -f -C` on the address perf
      prints for each frame of a file gives them: its inlined functions,
      innermost first, then perf's symbol (the ELF symbol perf names the
      address after, as the profile does).  --no-inline: a recording
      without callchains, where perf prints runtime addresses (addr2line
      cannot take them): only the non-inlined frame of each location is
      compared.  --event: only perf's samples of that event.
  pprof_cmp.py top PB REPORT.JSON
      `go tool pprof -top -noinlines` (every node; counts with
      -sample_index=samples, nanoseconds with the event's index) against
      `dsostore report --children -s sym --json` of the same recording:
      per function, flat samples and period equal the report's samples
      and period, cumulative period its children_period.
Prints what differs and exits 1 if anything does."""
import collections
import json
import os
import re
import subprocess
import sys

PPROF = ["go", "tool", "pprof", "-symbolize=none"]
SEP = "-----------+-------------------------------------------------------"


def run(cmd, stdin=None):
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if r.returncode:
        sys.exit("%s: status %d: %s" % (" ".join(cmd), r.returncode, r.stderr[-2000:]))
    return r.stdout


def pprof_traces(pb, index):
    """Counter of (comm, pid, tid, frames), frames ((name, inlined), ...)."""
    out = run(PPROF + ["-traces", "-sample_index=" + index, pb])
    got = collections.Counter()
    for block in out.split(SEP)[1:]:
        if not block.strip():
            continue
        labels, frames, count = {}, [], None
        for line in block.split("\n"):
            if not line.strip():
                continue
            m = re.match(r"^ {0,10}(\d+)   (.*)$", line)
            if count is None and m:
                count = int(m.group(1))
                name = m.group(2)
            elif count is None:
                m = re.match(r"^\s*(\w+):\s+(.*)$", line)
                if not m:
                    sys.exit("pprof -traces: cannot read %r" % line)
                labels[m.group(1)] = m.group(2).strip()
                continue
            else:
                name = line.strip()
            inl = name.endswith(" (inline)")
            if inl:
                name = name[: -len(" (inline)")]
            # No function: "<unknown>" without a mapping, else the
            # mapping's file name in brackets ("[[vdso]]" for perf's
            # "[vdso]": a sample's garbage frame-pointer caller can land
            # there, unnamed by perf too).
            unknown = name == "<unknown>" or re.match(r"^\[.*\]$", name)
            frames.append(("?" if unknown else name, inl))
        if count is None:
            sys.exit("pprof -traces: a sample without a count: %r" % block)
        if count:
            got[(labels.get("thread", ""), labels.get("pid", ""), labels.get("tid", ""),
                 tuple(frames))] += count
    return got


def perf_samples(data, event):
    """[(comm, pid, tid, [(addr, sym, dso)...])] from perf script."""
    fields = "comm,pid,tid,event,ip,sym,dso"
    out = run(["perf", "script", "-i", data, "-F", fields])
    samples = []
    head = re.compile(r"^\s*(.*?)\s+(\d+)/(\d+)\s+(\S+?):\s*(.*)$")
    frame = re.compile(r"^\s*([0-9a-f]+) (.*) \((.*)\)$")
    cur = None
    for line in out.split("\n"):
        if not line.strip():
            cur = None
            continue
        m = head.match(line) if cur is None else None
        if m:
            comm, pid, tid, ev, rest = m.groups()
            cur = (comm, pid, tid, [])
            if event is None or ev == event:
                samples.append(cur)
            if rest.strip():  # no callchain: the frame on the same line
                f = frame.match(rest)
                if not f:
                    sys.exit("perf script: cannot read %r" % line)
                cur[3].append(f.groups())
                cur = None
            continue
        f = frame.match(line)
        if not f or cur is None:
            sys.exit("perf script: cannot read %r" % line)
        cur[3].append(f.groups())
    return samples


def inline_chains(samples):
    """{(dso, addr): [inlined function, ...] innermost first} by addr2line."""
    want = collections.defaultdict(set)
    for _, _, _, frames in samples:
        for addr, sym, dso in frames:
            if sym != "[unknown]" and dso.startswith("/") and os.path.isfile(dso):
                want[dso].add(addr)
    chains = {}
    for dso, addrs in want.items():
        addrs = sorted(addrs)
        out = run(["addr2line", "-a", "-i", "-f", "-C", "-e", dso],
                  stdin="".join("0x%s\n" % a for a in addrs))
        records = re.split(r"^0x[0-9a-f]+\n", out, flags=re.M)[1:]
        if len(records) != len(addrs):
            sys.exit("addr2line -e %s: %d answers to %d addresses" % (dso, len(records), len(addrs)))
        for a, rec in zip(addrs, records):
            lines = rec.rstrip("\n").split("\n")
            funcs = lines[0::2]
            chains[(dso, a)] = [] if funcs[0] == "??" else funcs[:-1]
    return chains


def perf_traces(data, inline, event):
    samples = perf_samples(data, event)
    chains = inline_chains(samples) if inline else {}
    want = collections.Counter()
    for comm, pid, tid, frames in samples:
        st = []
        for addr, sym, dso in frames:
            st += [(f, True) for f in chains.get((dso, addr), [])]
            st.append(("?" if sym == "[unknown]" else sym, False))
        want[(comm, pid, tid, tuple(st))] += 1
    return want


def show(key):
    comm, pid, tid, frames = key
    return "%s %s/%s: %s" % (comm, pid, tid, "; ".join(
        f + (" (inline)" if i else "") for f, i in frames))


def traces(pb, data, inline, index, event):
    got = pprof_traces(pb, index)
    want = perf_traces(data, inline, event)
    if not inline:  # only the frames that are locations
        flat = collections.Counter()
        for (comm, pid, tid, frames), n in got.items():
            flat[(comm, pid, tid, tuple(f for f in frames if not f[1]))] += n
        got = flat
    # Known: perf 6.1 names some stubs of libc's .plt "@plt", without the
    # name, others by another stub's name (in made-up recordings: mempcpy's
    # as "__tls_get_addr@plt"), and where
    # it names no stub of a program's .plt, the symbol before it (_init);
    # we give NAME@plt.  Whether a sample lands in a stub is the sampler's
    # luck: on both sides every stub (and _init, alike on both) is one
    # frame "<plt>"; nothing else is forgiven.
    def plt(f):
        return f.endswith("@plt") or f == "_init"

    def unplt(c):
        out = collections.Counter()
        for (comm, pid, tid, frames), n in c.items():
            out[(comm, pid, tid, tuple(("<plt>" if plt(f) else f, i) for f, i in frames))] += n
        return out
    known = sum(n for k, n in got.items() if any(plt(f) for f, _ in k[3]))
    got, want = unplt(got), unplt(want)
    if known:
        print("known: %d samples through a PLT stub, compared as \"<plt>\"" % known)
    bad = 0
    for k in sorted(set(got) | set(want), key=show):
        if got[k] != want[k]:
            bad += 1
            if bad <= 12:
                print("  stack %s: pprof %d, perf %d" % (show(k), got[k], want[k]))
    total = sum(want.values())
    inlined = sum(n for k, n in want.items() if any(i for _, i in k[3]))
    print("traces: %d samples in %d stacks (%d samples with inline frames), %d differ" %
          (total, len(want), inlined, bad))
    return bad == 0 and sum(got.values()) == total


def pprof_top(pb, index, unit=None):
    cmd = PPROF + ["-top", "-noinlines", "-nodecount=1000000", "-nodefraction=0",
                   "-edgefraction=0", "-sample_index=" + index]
    if unit:
        cmd.append("-unit=" + unit)
    out = run(cmd + [pb])
    rows, on = {}, False
    for line in out.split("\n"):
        if re.match(r"^\s+flat\s+flat%\s+sum%\s+cum\s+cum%", line):
            on = True
            continue
        if not on or not line.strip():
            continue
        m = re.match(r"^\s*(\S+)\s+\S+%\s+\S+%\s+(\S+)\s+\S+%\s+(.*)$", line)
        if not m:
            sys.exit("pprof -top: cannot read %r" % line)

        def num(v):
            v = v[: -len(unit)] if unit and v.endswith(unit) else v
            return int(v)

        rows[m.group(3)] = (num(m.group(1)), num(m.group(2)))
    return rows


def top(pb, report_json):
    with open(report_json) as f:
        ev = json.load(f)["events"][0]
    event = ev["event"]
    counts = pprof_top(pb, "samples")
    periods = pprof_top(pb, event, "ns")
    rows = collections.defaultdict(list)
    for e in ev["entries"]:
        if e.get("symbol"):
            rows[e["symbol"]].append(e)
    bad = 0

    def differ(what):
        nonlocal bad
        bad += 1
        if bad <= 12:
            print("  " + what)

    for name, es in sorted(rows.items()):
        flat = sum(e["samples"] for e in es)
        period = sum(e["period"] for e in es)
        c = counts.get(name, (0, 0))
        p = periods.get(name, (0, 0))
        if c[0] != flat:
            differ("%s: flat %d samples in pprof, %d in the report" % (name, c[0], flat))
        if p[0] != period:
            differ("%s: flat %d ns in pprof, %d in the report" % (name, p[0], period))
        # A name of two rows (two DSOs) is one node for pprof: one
        # sample through both counts once there, twice in the rows.
        if len(es) == 1 and p[1] != es[0]["children_period"]:
            differ("%s: cum %d ns in pprof, children %d in the report" %
                   (name, p[1], es[0]["children_period"]))
    # (pprof names a location it has no function for by its address, as
    # "<unknown>", or, with -noinlines, as "[FILE]" of its mapping: a
    # sample where no symbol is, such as one in the vDSO past its
    # functions, which the report shows with no symbol either.)
    for name in counts:
        if (name not in rows and not name.startswith("0x") and name != "<unknown>" and
                not (name.startswith("[") and name.endswith("]"))):
            differ("%s: in pprof, not in the report" % name)
    print("top: %d functions, %d differ" % (len(rows), bad))
    return bad == 0 and len(rows) > 0


def main():
    a = sys.argv[1:]
    if len(a) >= 3 and a[0] == "traces":
        index, event = "samples", None
        if "--sample-index" in a:
            index = a[a.index("--sample-index") + 1]
        if "--event" in a:
            event = a[a.index("--event") + 1]
        ok = traces(a[1], a[2], "--no-inline" not in a, index, event)
    elif len(a) == 3 and a[0] == "top":
        ok = top(a[1], a[2])
    else:
        sys.exit(__doc__)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
