#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Talks to an addr2line over pipes as perf 6.1's srcline does
# (tools/perf/util/srcline.c: one child per DSO, "ADDR\n,\n" written per
# address, the answer read up to the one the "," gets): for each request
# line of REQUESTS (a file; each line is sent as it is, then ",\n"), the
# lines read until the answer of the "," has come: with -a its address
# line "0x0...0" (then "??" with -f, and "??:0"); without, "??" (with -f)
# and "??:0"; with -p, those on one line.  Then stdin is closed and the
# rest read to the end.
#
#   a2l_pipe.py REQUESTS OUT -- COMMAND ARGS...
#
# OUT gets the transcript: "> request" and the lines read for it, as
# repr()s, so that two addr2lines can be compared byte for byte.  A read
# that waits more than 10 s (an answer not flushed: perf would block
# there) stops the run: exit 1 with the request it was on.
import os
import select
import subprocess
import sys

TIMEOUT = 10.0


def main():
    reqs_path, out_path = sys.argv[1], sys.argv[2]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    flags = "".join(a[1:] for a in cmd if a.startswith("-") and not a.startswith("--"))
    with_a, with_f = "a" in flags, "f" in flags
    if "p" in flags:  # one line: "0x0...0: ?? ??:0"
        sentinel = [(b"0x0000000000000000: " if with_a else b"") +
                    (b"?? " if with_f else b"") + b"??:0\n"]
    else:
        sentinel = ([b"0x0000000000000000\n"] if with_a else []) + \
            ([b"??\n"] if with_f else []) + [b"??:0\n"]
    reqs = open(reqs_path, "rb").read().split(b"\n")
    if reqs and reqs[-1] == b"":
        reqs.pop()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    fd = p.stdout.fileno()
    buf = b""
    out = []

    def read_line(what):
        nonlocal buf
        while b"\n" not in buf:
            r, _, _ = select.select([fd], [], [], TIMEOUT)
            if not r:
                p.kill()
                sys.exit("no answer within %.0f s to %r (not flushed?)" % (TIMEOUT, what))
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            buf += chunk
        line, buf = buf.split(b"\n", 1)
        return line + b"\n"

    for req in reqs:
        p.stdin.write(req + b"\n,\n")
        p.stdin.flush()
        out.append("> %r" % req)
        got, eof = [], False
        # At least the request's own answer (as many lines as the
        # sentinel's) before the sentinel's answer can end it.
        while len(got) < 2 * len(sentinel) or got[-len(sentinel):] != sentinel:
            line = read_line(req)
            if line is None:
                eof = True
                break
            got.append(line)
        out.extend(repr(g) for g in got)
        if eof:
            out.append("EOF")
            break
    p.stdin.close()
    out.append("> (end of input)")
    while True:
        r, _, _ = select.select([fd], [], [], TIMEOUT)
        if not r:
            p.kill()
            sys.exit("no end of output within %.0f s of the end of input" % TIMEOUT)
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buf += chunk
    out.extend(repr(l + b"\n") for l in buf.split(b"\n")[:-1])
    if buf and not buf.endswith(b"\n"):
        out.append("unterminated %r" % buf.split(b"\n")[-1])
    out.append("exit %d" % p.wait())
    with open(out_path, "w") as f:
        f.write("\n".join(out) + "\n")


main()
