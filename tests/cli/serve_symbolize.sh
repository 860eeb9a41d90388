#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# dsostore serve's POST /symbolize over HTTP, against llvm-symbolizer.
#
# A program compiled here (-g -O2, an inlined function), its debug file
# (objcopy --only-keep-debug) and stripped executable in the -F directory
# of a node with no upstream (two()'s lines in a file whose name has a
# quote, a backslash and a tab, which every JSON string must escape).
# Frames of its functions (nm -S), as text
# lines in each form the spec names (BUILDID:HEX 0xADDR, CODE ..., HEX
# ADDR) and as a JSON body (vaddr as a string and an integer, a file
# offset placed by readelf -lW's PT_LOAD, a return address), are answered
# in order with each frame's FunctionName, FileName, Line and Column as
# `llvm-symbolizer --output-style=JSON --obj=FILE` gives them for the
# address (addr - 1 for the return address), under llvm-symbolizer's key
# names in its order.  An unknown build ID is no_debuginfo, bad lines are
# bad_input with the line named; 270,000 frames as text and 40,000 as
# JSON (blocks of the streamed answer of either size) are answered each
# as alone, one more than --max-frames is a 413, a large text body parsed
# as it arrives still names a line too long (400) and a client leaving
# mid-body costs nothing, and /metrics counts the frames by status.  The
# same frames through `dsostore symbolize` (debuginfo fetched from the
# node) name the same functions and lines.
set -euo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

tl_need gcc curl llvm-symbolizer python3 objcopy readelf nm eu-readelf
tl_no_proxy
tl_sanitizer_exitcodes
tl_tmpdir serve_symbolize

cat >"$tmp/p.c" <<'EOF'
#include <stdio.h>
static inline __attribute__((always_inline)) int sq(int x) { return x * x + 1; }
__attribute__((noinline)) int one(int x) { return sq(x) * 7 + x / 3; }
/* A file name a JSON string must escape: a quote, a backslash, a tab. */
#line 3 "q\"uo\\te\td.c"
__attribute__((noinline)) int two(int x) { return one(x) + sq(x + 2) * one(x + 1); }
int main(int argc, char **argv) { (void)argv; printf("%d\n", two(argc)); return 0; }
EOF
gcc -g -O2 -Wl,--build-id -o "$tmp/p" "$tmp/p.c"
bid=$(tl_build_id "$tmp/p")
mkdir -p "$tmp/F"
objcopy --only-keep-debug "$tmp/p" "$tmp/F/p.debug"
objcopy --strip-all "$tmp/p" "$tmp/F/p"

# Addresses inside each function: its start, start + 1, the middle, its
# last byte.
addrs=()
while read -r start size name; do
	s=$((16#$start)) n=$((16#$size))
	addrs+=("$(printf '0x%x' $s)" "$(printf '0x%x' $((s + 1)))"
		"$(printf '0x%x' $((s + n / 2)))" "$(printf '0x%x' $((s + n - 1)))")
done < <(nm -S "$tmp/p" | awk '$3 ~ /^[Tt]$/ && ($4 == "one" || $4 == "two" || $4 == "main") {print $1, $2, $4}')
[ "${#addrs[@]}" = 12 ] || { echo "FAIL: nm -S found ${#addrs[@]} / 12 addresses" >&2; exit 1; }

"$DSOSTORE" serve -p 0 --port-file "$tmp/port" -F "$tmp/F" --upstream '' \
	--cache "$tmp/cache" --max-frames 270000 --idle-timeout 4 >"$tmp/serve.log" 2>&1 &
pids+=($!)
port=
if ! tl_wait_port_file port "$tmp/port"; then
	echo "FAIL: dsostore serve did not start:" >&2
	cat "$tmp/serve.log" >&2
	exit 1
fi
url=http://127.0.0.1:$port/symbolize

# The oracle, for every address of the program and addr - 1 of the return
# address below.
ret=$(printf '0x%x' $((${addrs[5]} + 1)))
llvm-symbolizer --output-style=JSON --obj="$tmp/p" "${addrs[@]}" "$(printf '0x%x' $((ret - 1)))" \
	>"$tmp/oracle.json"

# Text: the three spellings of a frame in turn, blank lines skipped, then
# an unknown build ID and two bad lines.
{
	for ((i = 0; i < ${#addrs[@]}; i++)); do
		case $((i % 3)) in
		0) echo "BUILDID:$bid ${addrs[i]}" ;;
		1) echo "CODE BUILDID:$bid ${addrs[i]}" ;;
		2) printf '%s %s\r\n\n' "$bid" "${addrs[i]#0x}" ;;
		esac
	done
	echo "BUILDID:00112233445566778899aabbccddeeff00112233 0x1000"
	echo "DATA BUILDID:$bid 0x4010"
	echo "BUILDID:$bid"
} >"$tmp/req.txt"
code=$(curl -s -o "$tmp/text.out" -D "$tmp/text.hdr" -w '%{http_code}' --data-binary @"$tmp/req.txt" \
	-H 'Content-Type: text/plain' "$url") || code=curl-failed
[ "$code" = 200 ] || fail "text request: HTTP $code: $(cat "$tmp/text.out")"
grep -qi '^content-type: application/x-ndjson' "$tmp/text.hdr" || fail "text answer's Content-Type"

# JSON: the same module twice (one table entry), a vaddr as an integer,
# a file offset, a return address.
off=
while read -r o v f; do
	a=$((${addrs[4]})) o=$((o)) v=$((v)) f=$((f))
	if ((a >= v && a < v + f)); then off=$(printf '0x%x' $((a - v + o))); fi
done < <(readelf -lW "$tmp/p" | awk '$1 == "LOAD" {print $2, $3, $5}')
[ -n "$off" ] || fail "no PT_LOAD holds ${addrs[4]}"
cat >"$tmp/req.json" <<EOF
{"modules":[{"build_id":"$bid"},{"build_id":"$bid","note":"ignored"}],
 "frames":[{"module":0,"vaddr":"${addrs[0]}"},{"module":1,"vaddr":$((${addrs[2]}))},
  {"module":0,"offset":"$off"},{"module":1,"vaddr":"$ret","return_address":true}],
 "client":{"n":[1,2,{"x":null}]}}
EOF
code=$(curl -s -o "$tmp/json.out" -D "$tmp/json.hdr" -w '%{http_code}' --data-binary @"$tmp/req.json" \
	-H 'Content-Type: application/json' "$url") || code=curl-failed
[ "$code" = 200 ] || fail "JSON request: HTTP $code: $(cat "$tmp/json.out")"
grep -qi '^content-type: application/json' "$tmp/json.hdr" || fail "JSON answer's Content-Type"


python3 - "$tmp" "$bid" "${#addrs[@]}" <<'EOF' || fail "the answers differ from llvm-symbolizer's (above)"
import json, sys

tmp, bid, naddrs = sys.argv[1], sys.argv[2], int(sys.argv[3])
oracle = json.load(open(f"{tmp}/oracle.json"))
bad = 0

def err(msg):
    global bad
    bad += 1
    print("  " + msg, file=sys.stderr)

def same(what, ours, theirs):
    """Frame by frame: the fields llvm-symbolizer and we both know, and
    llvm-symbolizer's keys in its order."""
    if ours.get("Status") != "symbolized":
        err(f"{what}: status {ours.get('Status')}: {ours}")
        return
    if ours.get("BuildID") != bid or ours.get("ModuleName") != "BUILDID:" + bid:
        err(f"{what}: module {ours.get('BuildID')} {ours.get('ModuleName')}")
    base = [k for k in ours if k not in ("BuildID", "Status")]
    if base != list(theirs):
        err(f"{what}: keys {list(ours)}, llvm-symbolizer's {list(theirs)}")
    if list(ours) != sorted(ours):
        err(f"{what}: keys not in llvm-symbolizer's (alphabetical) order: {list(ours)}")
    a, b = ours["Symbol"], theirs["Symbol"]
    if len(a) != len(b):
        err(f"{what}: {len(a)} frames, llvm-symbolizer {len(b)}:\n    {a}\n    {b}")
    for x, y in zip(a, b):
        if list(x) != list(y):
            err(f"{what}: frame keys {list(x)}, llvm-symbolizer's {list(y)}")
        for k in ("FunctionName", "FileName", "Line", "Column"):
            if x.get(k) != y.get(k):
                err(f"{what}: {k} {x.get(k)!r}, llvm-symbolizer {y.get(k)!r}")

text = [json.loads(l) for l in open(f"{tmp}/text.out").read().splitlines()]
if len(text) != naddrs + 3:
    err(f"text: {len(text)} answers for {naddrs + 3} frames")
else:
    for i in range(naddrs):
        if text[i]["Address"] != oracle[i]["Address"]:
            err(f"text {i}: Address {text[i]['Address']}, asked {oracle[i]['Address']}")
        same(f"text {i} ({oracle[i]['Address']})", text[i], oracle[i])
    u = text[naddrs]
    if u["Status"] != "no_debuginfo" or u["Symbol"] != [] or "Error" not in u:
        err(f"unknown build ID: {u}")
    # (a blank line after every third frame)
    for k, line in ((1, naddrs + naddrs // 3 + 2), (2, naddrs + naddrs // 3 + 3)):
        b = text[naddrs + k]
        if b["Status"] != "bad_input" or b["Symbol"] != [] or \
           not b.get("Error", {}).get("Message", "").startswith(f"line {line}:"):
            err(f"bad line {line}: {b}")

doc = json.load(open(f"{tmp}/json.out"))
frames = doc.get("frames", [])
want = [(0, "vaddr"), (2, "vaddr"), (4, "offset"), (naddrs, "return address")]
if list(doc) != ["frames"] or len(frames) != len(want):
    err(f"JSON: {list(doc)} with {len(frames)} frames, not 4")
else:
    for f, (i, how) in zip(frames, want):
        same(f"JSON {how} {f['Address']}", f, oracle[i])
    if frames[1]["Address"] != oracle[2]["Address"]:
        err(f"JSON: an integer address answered as {frames[1]['Address']}")
sys.exit(1 if bad else 0)
EOF

# The same frames through `dsostore symbolize` (the CLI, checked against
# addr2line elsewhere), its debuginfo fetched from the node itself: the
# same functions, files, lines and columns, frame for frame.
for a in "${addrs[@]}"; do echo "$bid $a"; done |
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/cli-cache \
		"$DSOSTORE" symbolize --output-style=JSON -i -C >"$tmp/cli.out" 2>"$tmp/cli.err" ||
	fail "dsostore symbolize: $(head -3 "$tmp/cli.err")"
python3 - "$tmp" "${#addrs[@]}" <<'EOF4' || fail "/symbolize differs from dsostore symbolize (above)"
import json, sys

tmp, n = sys.argv[1], int(sys.argv[2])
node = [json.loads(l) for l in open(f"{tmp}/text.out").read().splitlines()][:n]
cli = [json.loads(l) for l in open(f"{tmp}/cli.out").read().splitlines()]
keys = ("FunctionName", "FileName", "Line", "Column")
if len(cli) != n:
    sys.exit(f"  {len(cli)} answers from dsostore symbolize for {n} lines")
for a, b in zip(node, cli):
    fa = [tuple(f[k] for k in keys) for f in a["Symbol"]]
    fb = [tuple(f[k] for k in keys) for f in b["Symbol"]]
    if a["Address"] != b["Address"] or fa != fb:
        sys.exit(f"  {a['Address']}: node {fa}\n  cli  {b['Address']} {fb}")
EOF4

# 270,000 frames (--max-frames): answered in blocks of 65,536 (four
# whole, one short: a request of at least four such blocks has them) as
# the response streams, every one in order, each as the same frame asked
# alone above; one more frame is refused whole (413).  (The JSON requests
# below, of 40,000 frames, take blocks of 16,384.)
big() { # N: N frames cycling through the addresses
	printf '%s\n' "${addrs[@]}" | awk -v n="$1" -v bid="$bid" \
		'{ a[NR - 1] = $0 } END { for (i = 0; i < n; i++) print bid, a[i % NR] }'
}
code=$(big 270000 | curl -s -m 300 -o "$tmp/big.out" -w '%{http_code}' --data-binary @- "$url") ||
	code=curl-failed
[ "$code" = 200 ] || fail "270000 frames: HTTP $code"
python3 - "$tmp" "${#addrs[@]}" <<'EOF2' || fail "the 270000-frame answer differs from the frames asked alone"
import sys

tmp, naddrs = sys.argv[1], int(sys.argv[2])
# (the lines as text: the node writes each frame's object the same way
# whoever asks, so the answer of frame i is the line of its address alone)
alone = open(f"{tmp}/text.out").read().splitlines()[:naddrs]
lines = open(f"{tmp}/big.out").read().splitlines()
if len(lines) != 270000:
    sys.exit(f"  {len(lines)} answers for 270000 frames")
for i, l in enumerate(lines):
    if l != alone[i % naddrs]:
        sys.exit(f"  frame {i}: {l}\n  alone: {alone[i % naddrs]}")
EOF2
# The same as one JSON document (its frames written by several threads
# and sent in order, the commas between blocks included), two such
# requests at once, a client that reads a little of one and leaves, and
# one that reads a little and then nothing: each answer whole and in
# order, the one not read closed after --idle-timeout (4 s) short of its
# end, the node answering on after.
python3 - "$bid" "${addrs[@]}" >"$tmp/big.json" <<'EOF5'
import json, sys
bid, addrs = sys.argv[1], sys.argv[2:]
json.dump({"modules": [{"build_id": bid}],
           "frames": [{"module": 0, "vaddr": addrs[i % len(addrs)]} for i in range(40000)]},
          sys.stdout)
EOF5
pair=()
for k in 1 2; do
	curl -s -m 120 -o "$tmp/bigj$k.out" -w '%{http_code}' -H 'Content-Type: application/json' \
		--data-binary @"$tmp/big.json" "$url" >"$tmp/bigj$k.code" &
	pair+=($!)
done
python3 - "$port" "$tmp/big.json" >"$tmp/stalled.bytes" <<'EOF6' || fail "clients leaving or stalling mid-answer: $(tail -3 "$tmp/serve.log")"
import socket, sys, time
body = open(sys.argv[2], "rb").read()
req = (b"POST /symbolize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
       b"Content-Length: %d\r\n\r\n" % len(body) + body)
def ask():
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=60)
    # (a small receive buffer: the answer cannot all wait in the kernel)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    s.sendall(req)
    got = s.recv(65536)
    if not got.startswith(b"HTTP/1.1 200"):
        sys.exit("  answered %r" % got[:100])
    return s, len(got)
s, _ = ask()
s.close()  # leaves
s, n = ask()
time.sleep(10)  # reads nothing for longer than --idle-timeout
while True:
    try:
        d = s.recv(1 << 20)
    except ConnectionResetError:
        break  # (closed with bytes unread: a reset)
    except socket.timeout:
        sys.exit("  the stalled answer: no end %d bytes in" % n)
    if not d:
        break
    n += len(d)
print(n)
EOF6
for k in 1 2; do
	wait "${pair[k - 1]}" || fail "curl of the JSON request $k at once failed"
	[ "$(cat "$tmp/bigj$k.code")" = 200 ] || fail "40000 frames as JSON ($k): HTTP $(cat "$tmp/bigj$k.code")"
done
whole=$(wc -c <"$tmp/bigj1.out")
stalled=$(cat "$tmp/stalled.bytes")
[ -n "$stalled" ] && [ "$stalled" -lt "$whole" ] ||
	fail "the answer not read: ${stalled:-?} bytes came, of $whole (not closed short of its end)"
python3 - "$tmp" "${#addrs[@]}" <<'EOF7' || fail "the 40000-frame JSON answers differ from the frames asked alone"
import json, sys

tmp, naddrs = sys.argv[1], int(sys.argv[2])
alone = [json.loads(l) for l in open(f"{tmp}/text.out").read().splitlines()][:naddrs]
for k in (1, 2):
    frames = json.load(open(f"{tmp}/bigj{k}.out"))["frames"]
    if len(frames) != 40000:
        sys.exit(f"  request {k}: {len(frames)} answers for 40000 frames")
    for i, f in enumerate(frames):
        # (the text answer names the module by its BUILDID: line)
        want = alone[i % naddrs]
        if f["Symbol"] != want["Symbol"] or f["Status"] != want["Status"] or \
                int(f["Address"], 16) != int(want["Address"], 16):
            sys.exit(f"  request {k}, frame {i}: {f}\n  alone: {want}")
EOF7
code=$(big 270001 | curl -s -o "$tmp/big.out" -w '%{http_code}' --data-binary @- "$url") ||
	code=curl-failed
[ "$code" = 413 ] || fail "270001 frames with --max-frames 270000: HTTP $code, not 413"
# A text body of 1 MiB or more is parsed as it comes: a line too long in
# its first KBs is a 400 naming that line once the whole body is in; a
# client that sends half of such a body and leaves holds nothing after
# (the node answers the next request).
python3 - "$port" "$bid" "${addrs[0]}" >"$tmp/early.out" <<'EOF8' ||
import socket, sys
port, bid, addr = int(sys.argv[1]), sys.argv[2], sys.argv[3]
line = f"{bid} {addr}\n".encode()
def post(body, send=None):
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    s.sendall(b"POST /symbolize HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body))
    s.sendall(body if send is None else body[:send])
    return s
def answer(s):
    got = b""
    while True:
        d = s.recv(1 << 20)
        if not d:
            return got
        got += d
long_line = line * 1000 + b"x" * 5000 + b"\n" + line * ((3 << 20) // len(line))
got = answer(post(long_line))
if not got.startswith(b"HTTP/1.1 400") or b"line 1001: longer than 4096 bytes" not in got:
    sys.exit("a line too long in a 3 MB body: %r" % got[:300])
left = post(line * ((4 << 20) // len(line)), send=2 << 20)
left.close()
got = answer(post(line * 3))
if not got.startswith(b"HTTP/1.1 200") or got.count(b'"Status":"symbolized"') != 3:
    sys.exit("after a client left mid-body: %r" % got[:300])
EOF8
	fail "large bodies parsed as they come: $(cat "$tmp/early.out") $(tail -3 "$tmp/serve.log")"
# A document that is not the request's: 400 naming the byte.
code=$(curl -s -o "$tmp/bad.out" -w '%{http_code}' -H 'Content-Type: application/json' \
	--data-binary '{"frames":5}' "$url") || code=curl-failed
[ "$code" = 400 ] || fail "a malformed JSON body: HTTP $code, not 400"
grep -q '^byte 11:' "$tmp/bad.out" || fail "the 400 names no byte: $(cat "$tmp/bad.out")"

# The node's counters: every frame of the three answered requests.
n=${#addrs[@]}
# (the clients that left or stalled: their frames written before the
# connection closed are counted too, at most all 40,000 each)
for kv in "no_debuginfo 1" "bad_input 2" "no_symbol 0" "error 0"; do
	set -- $kv
	got=$(tl_metric "$port" "dsostore_symbolize_frames_total{status=\"$1\"}")
	[ "$got" = "$2" ] || fail "/metrics: $1 frames $got, not $2"
done
got=$(tl_metric "$port" 'dsostore_symbolize_frames_total{status="symbolized"}')
lo=$((n + 4 + 270000 + 2 * 40000 + 3)) hi=$((lo + 2 * 40000))
[ "$got" -ge "$lo" ] && [ "$got" -le "$hi" ] ||
	fail "/metrics: $got frames symbolized, not $lo to $hi"
got=$(tl_metric "$port" dsostore_symbolize_requests_total)
[ "$got" = 8 ] || fail "/metrics: $got /symbolize requests answered, not 8"


# Text with ?offsets=1: the same file offset as a line; as a vaddr (no
# query) the same number is another place, or none.
echo "BUILDID:$bid $off" >"$tmp/req-off.txt"
for q in '?offsets=1' ''; do
	code=$(curl -s -o "$tmp/off$q.out" -w '%{http_code}' --data-binary @"$tmp/req-off.txt" \
		"$url$q") || code=curl-failed
	[ "$code" = 200 ] || fail "text offset request$q: HTTP $code"
done
python3 - "$tmp" "$off" <<'EOF3' || fail "?offsets=1 answered otherwise than the JSON offset frame"
import json, sys

tmp, off = sys.argv[1], sys.argv[2]
want = json.load(open(f"{tmp}/json.out"))["frames"][2]  # checked against llvm-symbolizer
got = json.loads(open(f"{tmp}/off?offsets=1.out").read())
asis = json.loads(open(f"{tmp}/off.out").read())
if got["Symbol"] != want["Symbol"] or got["Status"] != "symbolized":
    sys.exit(f"  {got}\n  JSON's: {want}")
if asis["Symbol"] == want["Symbol"] and int(off, 16) != int(want["Address"], 16):
    sys.exit(f"  without ?offsets=1 {off} was still a file offset: {asis}")
EOF3

# SIGTERM: a clean exit (under the sanitizers: no leak of a request's
# stream, no report, or the status says so).
kill -TERM "${pids[0]}"
rc=0
wait "${pids[0]}" || rc=$?
pids=()
[ "$rc" = 0 ] || fail "dsostore serve exited $rc on SIGTERM"

tl_finish serve_symbolize "${#addrs[@]} addresses as text and JSON, as llvm-symbolizer names them" \
	tail -20 "$tmp/serve.log"
