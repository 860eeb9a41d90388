#!/usr/bin/env python3
"""The tables of bench/bench_serve.sh, from the measures it collected.

  serve_report.py RESULTS

RESULTS has one measure a line (server 0 is the node):
  hit SERVER CONNS REQ_PER_S P50_MS P99_MS NON2XX SOCKET_ERRORS TIMEOUTS CPU_PCT MB_PER_S
  miss SERVER CONNS WALL_MS CPU_MS UPSTREAM_REQUESTS IDS_NOT_ONCE
  sym TOOL FRAMES WALL_S CPU_MS PEAK_RSS_KB
  cmp FRAMES DIFFERING COMPARED MISSING
  hwm SERVER KB
  server SERVER NAME...      meta KEY VALUE...
Prints the four tables, the goals and the BENCH lines; exit status 1 when
a measure is missing or wrong (a non-2xx answer under wrk, answers
missing), not when a goal is missed: socket errors and timeouts under
wrk are counted and shown.
"""
import math
import sys
from collections import defaultdict

sys.path.insert(0, __import__("os").path.dirname(__file__))
from gen_symbolize_bench import median, results, table  # noqa: E402


def show(head, rows, left=1):
    """A table, or a line saying that part was not run (-o)."""
    if rows:
        table(head, rows, left)
    else:
        print("  (not run)")


def size_bytes(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1].upper()] if s[-1].upper() in mult else int(s)


def ratio(x):
    if x is None:
        return "-"
    return "%.0fx" % x if x >= 100 else "%.1fx" % x if x >= 10 else "%.2fx" % x


def num(v, fmt="%.1f"):
    return "-" if v is None else fmt % v


def kfmt(n):
    return "%dk" % (n // 1000) if n < 1000000 else "%gM" % (n / 1e6)


def main():
    names = {}
    hits, misses, syms = defaultdict(list), defaultdict(list), defaultdict(list)
    cmps, hwm = {}, {}
    meta, rows = results(sys.argv[1])
    for p in rows:
        if p[0] == "server":
            names[int(p[1])] = " ".join(p[2:])
        elif p[0] == "hit":
            hits[(int(p[1]), int(p[2]))].append([float(x) for x in p[3:]])
        elif p[0] == "miss":
            misses[(int(p[1]), int(p[2]))].append([float(x) for x in p[3:]])
        elif p[0] == "sym":
            syms[(p[1], int(p[2]))].append([float(x) for x in p[3:]])
        elif p[0] == "cmp":
            cmps[int(p[1])] = [int(x) for x in p[2:5]]
        elif p[0] == "hwm":
            hwm[int(p[1])] = int(p[2])
        elif p[0] == "nosym":
            meta["nosym"] = p[1]
    bad = False
    bench = []

    def B(key, value, unit, r="-", gmax="-", gmin="-", met="-", lo=None, hi=None):
        extra = "" if lo is None else " min=%s max=%s" % (lo, hi)
        bench.append("BENCH serve.%s value=%s unit=%s ratio=%s goal_max=%s goal_min=%s met=%s%s"
                     % (key, value, unit, r, gmax, gmin, met, extra))

    servers = sorted(names)
    peer = 1 if 1 in names else None  # Debian's debuginfod: the goals' reference
    direct = [s for s in names if names[s].endswith("straight to dsserver")]  # the misses' reference

    def skey(s):
        if s == 0:
            return "node"
        return "direct" if s in direct else names[s].replace("debuginfod ", "debuginfod_").replace(".", "_")

    budget = size_bytes(meta["budget"])
    nfiles, mb, nurls = meta["files"].split()
    nmiss, lat = (int(x) for x in meta["miss"].split())
    print("dsostore serve benchmark: %s; %s CPUs, load average %s at start, %s at the end; "
          "median of %s run(s)" % (", ".join(names[s] for s in servers if s not in direct), meta["cpus"], meta["load"],
                                   meta["load_end"], meta["runs"]))

    # (1) cached hits
    print("\n(1) cached hits: wrk -d %ss over %s debuginfo URLs (%s files, %s MB in the -F directory), "
          "every server warmed first; MB/s is what wrk received; "
          "errors are the runs' sum (timeouts: no answer within wrk's 2 s); "
          "'node ÷' is the node's req/s (p99) over this server's"
          % (meta["wrk_s"], nurls, nfiles, mb))
    rows = []
    med = {}
    for c in sorted({c for _, c in hits}):
        for s in servers:
            v = hits.get((s, c))
            if not v:
                continue
            m = [median([x[i] for x in v]) for i in range(8)]
            med[(s, c)] = m
            rps, p50, p99, cpu, mbps = m[0], m[1], m[2], m[6], m[7]
            non2xx, sockerr, timeouts = (sum(x[i] for x in v) for i in (3, 4, 5))
            if non2xx:
                bad = True
            n0 = med.get((0, c))
            rows.append([str(c), names[s], str(len(v)), "%.0f" % rps, "%.0f" % mbps,
                         "%.2f" % p50, "%.2f" % p99,
                         "%.0f" % cpu, "%.0f" % (rps / (cpu / 100)) if cpu else "-", "%d" % non2xx,
                         "%d" % sockerr, "%d" % timeouts,
                         "-" if s == 0 or not n0 else ratio(n0[0] / rps),
                         "-" if s == 0 or not n0 else ratio(n0[2] / p99) if p99 else "-"])
            k = "hits.%d.%s" % (c, skey(s))
            B(k + ".rps", "%.0f" % rps, "req/s", lo="%.0f" % min(x[0] for x in v), hi="%.0f" % max(x[0] for x in v))
            B(k + ".p50", "%.3f" % p50, "ms")
            B(k + ".p99", "%.3f" % p99, "ms")
            B(k + ".cpu", "%.0f" % cpu, "%")
    show(["conns", "server", "runs", "req/s", "MB/s", "p50 ms", "p99 ms", "CPU %", "req/CPU-s", "non-2xx",
          "sock err", "timeouts", "node ÷ req/s", "node ÷ p99"], rows, left=2)

    # (2) misses
    client = names[direct[0]].replace(" straight to dsserver", "") if direct else "?"
    print("\n(2) federated misses: %d build IDs that only the upstream has (dsserver, %d ms per request), "
          "asked with C connections (%s); floor = ceil(N/C) x %d ms; upstream requests from "
          "dsserver's log; the last row is the same client asking dsserver itself" % (nmiss, lat, client, lat))
    rows = []
    mmed = {}
    for c in sorted({c for _, c in misses}):
        floor = math.ceil(nmiss / c) * lat
        for s in servers:
            v = misses.get((s, c))
            if not v:
                continue
            wall, cpu = median([x[0] for x in v]), median([x[1] for x in v])
            reqs, odd = max(x[2] for x in v), sum(x[3] for x in v)
            mmed[(s, c)] = (wall, floor, v)
            n0 = mmed.get((0, c))
            rows.append([str(c), names[s], str(len(v)), "%.0f" % wall, "%d" % floor, ratio(wall / floor),
                         "%d" % reqs, "%.2f" % (reqs / nmiss), "%d" % odd, "%.0f" % cpu,
                         "-" if s == 0 or not n0 else ratio(wall / n0[0])])
            k = "misses.%d.%s" % (c, skey(s))
            B(k + ".wall", "%.0f" % wall, "ms", ratio(wall / floor),
              lo="%.0f" % min(x[0] for x in v), hi="%.0f" % max(x[0] for x in v))
            B(k + ".upstream_requests", "%d" % reqs, "requests")
    show(["conns", "server", "runs", "wall ms", "floor ms", "vs floor", "upstream req", "per ID",
           "IDs not once", "CPU ms", "÷ node"], rows, left=2)

    # (3) /symbolize
    print("\n(3) POST /symbolize of %s frames (addresses over their functions' bytes), one request, "
          "curl's time; the CLI and llvm-symbolizer as whole processes; llvm-symbolizer given %s. "
          "'÷' = that route's wall over this one's (above 1x: this is faster)"
          % (meta["modules"].strip(), meta["llvm_in"]))
    routes = [("warm", "POST /symbolize, warm node", "clix"),
              ("cold", "POST /symbolize, new node (empty cache, no saved index)", "cli"),
              ("clix", "dsostore symbolize --output-style JSON, saved index", None),
              ("cli", "dsostore symbolize --output-style JSON, no saved index", None),
              ("llvm", "llvm-symbolizer --output-style=JSON --inlines", None)]
    rows = []
    smed = {}
    for n in sorted({n for _, n in syms}):
        for tool, name, vs in routes:
            v = syms.get((tool, n))
            if not v:
                continue
            wall, cpu, rss = (median([x[i] for x in v]) for i in range(3))
            smed[(tool, n)] = (wall, rss)
            cli = syms.get((vs, n)) if vs else None
            llvm = syms.get(("llvm", n))
            rows.append([kfmt(n), name, str(len(v)), "%.3f" % wall, "%.0f" % (n / wall), "%.0f" % cpu,
                         "%.0f" % (rss / 1024), ratio(median([x[0] for x in cli]) / wall) if cli else "-",
                         ratio(median([x[0] for x in llvm]) / wall) if llvm and tool != "llvm" else "-"])
            B("symbolize.%s.%s.wall" % (kfmt(n), tool), "%.3f" % wall, "s",
              lo="%.3f" % min(x[0] for x in v), hi="%.3f" % max(x[0] for x in v))
            B("symbolize.%s.%s.frames_per_s" % (kfmt(n), tool), "%.0f" % (n / wall), "frames/s")
    show(["frames", "route", "runs", "wall s", "frames/s", "CPU ms", "peak RSS MB", "÷ CLI", "÷ llvm"],
          rows, left=2)
    if "nosym" in meta:
        print("  the node's POST /symbolize answered %s: its rows are left out" % meta["nosym"])
        bad = True
    for n in sorted(cmps):
        d, c, miss = cmps[n]
        print("  %s frames: /symbolize differs from llvm-symbolizer (function, file, line of each frame) "
              "on %d of %d, %d missing" % (kfmt(n), d, c, miss))
        B("symbolize.%s.differ_llvm" % kfmt(n), d, "frames")
        if miss or c != n:
            bad = True

    # (4) memory
    print("\n(4) peak RSS (VmHWM) at the end of the run; the node's --mem-budget %s" % meta["budget"])
    rows = [[names[s], "%.0f" % (hwm[s] / 1024), meta["budget"] if s == 0 else "-",
             ("yes" if hwm[s] * 1024 <= budget else "no") if s == 0 else "-"] for s in servers if s in hwm]
    cold = [x[2] for (t, _), v in syms.items() if t == "cold" for x in v]
    if cold:
        rows.append(["dsostore serve, the new nodes of the cold /symbolize (largest)", "%.0f" % (max(cold) / 1024),
                     meta["budget"], "yes" if max(cold) * 1024 <= budget else "no"])
    table(["process", "VmHWM MB", "budget", "within"], rows)

    # the goals
    print("\ngoals")
    rows = []

    def goal(key, what, value, shown, gmin=None, gmax=None, unit="x", ok=None, text=None):
        if ok is None and value is not None:
            ok = (gmin is None or value >= gmin) and (gmax is None or value <= gmax)
        met = "-" if value is None else "yes" if ok else "no"
        if text is None:
            text = "= %s" % gmin if gmin == gmax else ">= %s" % gmin if gmax is None else "<= %s" % gmax
        rows.append([what, shown, text, met])
        B("goal." + key, "n/a" if value is None else "%.3g" % value, unit, "-",
          "-" if gmax is None else gmax, "-" if gmin is None else gmin, met)

    n0, p = med.get((0, 64)), med.get((peer, 64)) if peer else None
    r = n0[0] / p[0] if n0 and p else None
    goal("hits.64.rps_vs_debuginfod", "cached hits at 64 conns: node req/s ÷ %s's" % names.get(peer, "debuginfod"),
         r, ratio(r), gmin=2)
    r = n0[2] / p[2] if n0 and p and p[2] else None
    goal("hits.64.p99_vs_debuginfod", "cached hits at 64 conns: node p99 ÷ %s's (lower)" % names.get(peer, "debuginfod"),
         r, ratio(r), gmax=1, ok=r is not None and r < 1, text="< 1")
    for c in sorted({c for _, c in misses}):
        m = mmed.get((0, c))
        r = m[0] / m[1] if m else None
        goal("misses.%d.vs_floor" % c, "misses, %d conns: node wall ÷ floor" % c, r, ratio(r), gmax=1.2)
        if m:
            per = max(x[2] for x in m[2]) / nmiss
            once = sum(x[3] for x in m[2]) == 0
            goal("misses.%d.upstream_per_id" % c, "misses, %d conns: upstream requests per build ID" % c,
                 per, "%.2f%s" % (per, "" if once else " (not one each)"), gmin=1, gmax=1,
                 unit="requests", ok=once and per == 1)
    top = max((n for t, n in smed if t == "warm"), default=None)
    fps = top / smed[("warm", top)][0] if top else None
    goal("symbolize.warm_frames_per_s", "/symbolize warm, %s frames: frames/s" % (kfmt(top) if top else "-"),
         fps, "-" if fps is None else "%.0f" % fps, gmin=1000000, unit="frames/s")
    worst = max([hwm.get(0, 0)] + cold) * 1024
    goal("rss_vs_budget", "node peak RSS ÷ --mem-budget (every node of the run)", worst / budget,
         ratio(worst / budget), gmax=1)
    table(["goal", "measured", "goal", "met"], rows)
    print()
    for b in bench:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
