#!/bin/bash
# Saved symbol indexes (lib/symbolize/symfile.c) end to end, through the CLI.
#
# A program of two CUs (gcc -O2, DWARF 4, inlines) is indexed with
# `dsostore index`; the next process must map that file (its -v log says
# "loaded") and answer as addr2line does, and as dsostore does with the
# saved indexes off.  Where the file goes (local debuginfo: the index
# directory; fetched: its debuginfod cache entry) and its bytes (magic,
# the build ID at 104, the size a multiple of 8, identical for identical
# inputs) are checked against the format's description, not against the
# writer.  Then every way a file can be wrong — cut, flipped bytes,
# another build ID, another debuginfo of the same build ID, a symlink,
# huge, empty, not a file — must be ignored (and said so in the log), the
# answers stay addr2line's, and the next save makes it right.  So must a
# file of good bytes that another user could have written (its mode, its
# owner), and an index directory reached through a symlink.  Last:
# switched off, read-only, and `cache clean` by age.
set -u
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need gcc objcopy addr2line nm eu-readelf python3 cmp
tl_sanitizer_exitcodes
tl_tmpdir dssymfile
T=$tmp
PY=$(tl_python xxhash) || PY=python3
export HOME=$T/home DSOSTORE_SYMINDEX_PATH=$T/idx DEBUGINFOD_CACHE_PATH=$T/dcache
unset PERF_BUILDID_DIR DEBUGINFOD_URLS DSOSTORE_SYMINDEX XDG_CACHE_HOME
mkdir -p "$HOME" "$T/nodebug"
cd "$T" || exit 2
ds() { "$DSOSTORE" "$@" --debug-dir "$T/nodebug" --perf-buildid-dir ""; }

cat >a.c <<'EOF'
volatile int sink;
static inline __attribute__((always_inline)) int leaf(int x) { return x * sink + 1; }
static inline __attribute__((always_inline)) int mid(int x) { return x > 2 ? leaf(x) : leaf(x + 3) * 2; }
__attribute__((noinline)) int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += mid(i); return s; }
int other(int);
int main(int argc, char **argv) { (void)argv; return work(argc) + other(argc); }
EOF
cat >b.c <<'EOF'
static __attribute__((noinline)) int twice(int x) { return 2 * x; }
int other(int x) { return twice(x) + 7; }
EOF
gcc -g -gdwarf-4 -O2 -Wl,--build-id=sha1 -o prog a.c b.c || exit 2
bid=$(tl_build_id prog)
[ -n "$bid" ] || { echo "FAIL: no build ID" >&2; exit 1; }
idx=$T/idx/$bid
# Addresses: every function's start and a few bytes in (inline frames).
addrs=$(nm prog | awk '$2 ~ /^[Tt]$/ {print $1}' | while read -r a; do
	printf '0x%x 0x%x\n' "$((16#$a))" "$((16#$a + 6))"; done)
[ -n "$addrs" ] || exit 2
# shellcheck disable=SC2086
addr2line -f -i -e prog $addrs >expected

# symbolize -e prog, its -v log in $1.log; the output must be addr2line's.
answers() {
	# shellcheck disable=SC2086
	ds symbolize -v -f -i -e prog $addrs >"$1.out" 2>"$1.log"
	local rc=$?
	[ $rc = 0 ] || fail "$1: symbolize exited $rc: $(tail -3 "$1.log")"
	cmp -s expected "$1.out" || fail "$1: not addr2line's answers: $(diff expected "$1.out" | head -5)"
}

# The index can be saved here (the per-CU index and its parts exist).
if ! ds index prog >index.out 2>index.err; then
	if grep -q "not implemented" index.err; then
		echo "SKIP: no saved index yet: $(cat index.err)" >&2
		exit 77
	fi
	fail "dsostore index prog: $(cat index.err)"
fi

tl_case "index saves where documented"
[ "$(cat index.out)" = "$bid $idx" ] || fail "printed '$(cat index.out)', not '$bid $idx'"
[ -f "$idx" ] && [ ! -L "$idx" ] || fail "no file $idx"
[ "$(stat -c %a "$T/idx")" = 700 ] || fail "index directory mode $(stat -c %a "$T/idx")"
[ "$(stat -c %a "$idx")" = 644 ] || fail "index mode $(stat -c %a "$idx")"
$PY - "$idx" "$bid" <<'EOF' || fail "not the documented format"
import struct, sys
b = open(sys.argv[1], "rb").read()
bid = bytes.fromhex(sys.argv[2])
assert b[:8] == b"DSOSYMIX", b[:8]
version, order = struct.unpack_from("=II", b, 8)
assert (version, order) == (3, 0x01020304)
assert b[17] == len(bid) and b[104:104 + len(bid)] == bid
assert struct.unpack_from("=Q", b, 24)[0] == len(b) and len(b) % 8 == 0
debug_size, binary_size = struct.unpack_from("=QQ", b, 32)
import os
assert debug_size == os.path.getsize("prog") and binary_size == 0, (debug_size, binary_size)
ncus = struct.unpack_from("=I", b, 56)[0]
assert ncus >= 2, ncus  # a.c and b.c (and maybe crt files)
# Sums (where this python3 has the module; Debian's does, python3-xxhash):
# a chunk's is XXH3-64's low 32 bits, a blob's that of the array of its
# 64 KiB chunks' sums; each CU's array follows it (8-aligned), and the
# file ends after the last one.
elf_off, elf_size = struct.unpack_from("=QQ", b, 80)
try:
    import xxhash
except ImportError:
    xxhash = None
def h(x):
    return xxhash.xxh3_64_intdigest(bytes(x)) & 0xffffffff
def chunk_sums(blob):
    return [h(blob[k:k + 65536]) for k in range(0, len(blob), 65536)]
def align8(x):
    return (x + 7) & ~7
end = align8(elf_off + elf_size)
for i in range(ncus):
    off, size, cusum = struct.unpack_from("=QQI", b, 168 + 24 * i)
    if not size:
        continue
    assert off == end, (i, off, end)
    n = (size + 65535) // 65536
    at = align8(off + size)
    sums = list(struct.unpack_from("=%dI" % n, b, at))
    if xxhash:
        assert sums == chunk_sums(b[off:off + size]), "CU %d's chunk sums" % i
        assert cusum == h(b[at:at + 4 * n]), "CU %d's sum" % i
    end = align8(at + 4 * n)
assert end == len(b), (end, len(b))
if xxhash:
    want = h(struct.pack("=%dI" % ((elf_size + 65535) // 65536), *chunk_sums(b[elf_off:elf_off + elf_size])))
    assert struct.unpack_from("=I", b, 96)[0] == want, "ELF blob sum"
EOF
ls "$T/idx" | grep -v "^$bid\$" && fail "something else in the index directory"
tl_case_end

tl_case "the next process maps it, answers as addr2line"
answers loaded
grep -q "saved index $idx: loaded" loaded.log || fail "not loaded: $(grep -i index loaded.log | head -3)"
DSOSTORE_SYMINDEX=0 answers off
grep -qi "saved index" off.log && fail "switched off, yet: $(grep -i "saved index" off.log | head -2)"
tl_case_end

tl_case "identical inputs, identical bytes"
cp "$idx" first
rm "$idx"
ds index prog >/dev/null 2>&1 || fail "index again"
cmp -s first "$idx" || fail "a second save differs"
# The same binary elsewhere (another path, other times): the same file.
mkdir -p copy && cp prog copy/prog && touch -d '2001-01-01' copy/prog
rm "$idx"
ds index copy/prog >/dev/null 2>&1 || fail "index of the copy"
cmp -s first "$idx" || fail "the copy's index differs"
tl_case_end

# damaged WHAT: after the file is made WHAT (by the commands on stdin),
# the answers stay addr2line's and the log says why the file was not used
# (grep -E pattern $1); then a save makes it loadable again.
damaged() {
	local why=$1 name=$2

	tl_case "$name: ignored, answers right, replaced by the next save"
	bash -e || fail "could not make it"
	answers "$name"
	grep -q "saved index $idx: loaded" "$name.log" && fail "loaded it"
	grep -Eq "saved index $idx: .*($why)" "$name.log" ||
		fail "no reason in the log: $(grep -i "index" "$name.log" | head -3)"
	rm -rf "$idx"
	ds index prog >/dev/null 2>&1 || fail "save again"
	cmp -s first "$idx" || fail "not the same file again"
	tl_case_end
}
export idx T bid
damaged "shorter than a header|bytes, its header says|do not fit" truncated <<<'head -c 1000 first >"$idx.t" && mv "$idx.t" "$idx"'
damaged "checksum" header-flipped <<<'cp first "$idx.t" && printf "\x5a" | dd of="$idx.t" bs=1 seek=50 conv=notrunc 2>/dev/null && mv "$idx.t" "$idx"'
damaged "empty" empty <<<': >"$idx"'
damaged "symbolic link" symlink <<<'rm -f "$idx" && cp first "$T/elsewhere" && ln -s "$T/elsewhere" "$idx"'
damaged "too large" huge <<<'rm -f "$idx" && truncate -s 68719476737 "$idx"'
damaged "not a regular file" directory <<<'rm -f "$idx" && mkdir "$idx"'
damaged "no magic" garbage <<<'head -c 4096 /dev/urandom >"$idx"'
damaged "another build ID" other-bid <<<'python3 -c "
import sys, struct, zlib
b = bytearray(open(\"first\", \"rb\").read())
b[104] ^= 1
ncus, nranges = struct.unpack_from(\"=II\", b, 56)
b[100:104] = bytes(4)
b[100:104] = struct.pack(\"=I\", zlib.crc32(bytes(b[:168 + 24 * (ncus + nranges)])))
open(sys.argv[1], \"wb\").write(b)" "$idx"'
rm -rf "$idx"
ds index prog >/dev/null 2>&1

# Another user's hand.  forged.idx is first with "work" spelled "pwnd" in
# its parts and every sum and the CRC recomputed: a good index to every
# check but who may write it.  Ours and 0644 it is used (the control: the
# forgery is loadable, so a refusal below is for its owner or mode alone);
# writable by group or everyone, or another uid's (root can chown it to
# nobody), it is not: a warning, and the answers are addr2line's.
work=0x$(nm prog | awk '$3 == "work" {print $1}')
if $PY -c "import xxhash" 2>/dev/null; then
	$PY - first forged.idx <<'PYEOF' || fail "could not forge"
import struct, sys, zlib, xxhash
b = bytearray(open(sys.argv[1], "rb").read())
ncus, nranges = struct.unpack_from("=II", b, 56)
def h(x):
    return xxhash.xxh3_64_intdigest(bytes(x)) & 0xffffffff
# (A blob's sum is of its 64 KiB chunks' sums; a CU's array of them
# follows it, 8-aligned.)
def forge(off, size, sum_at, sums_at=None):
    part = bytes(b[off:off + size])
    b[off:off + size] = part.replace(b"work", b"pwnd")
    sums = struct.pack("=%dI" % ((size + 65535) // 65536),
                       *[h(b[k:min(k + 65536, off + size)]) for k in range(off, off + size, 65536)])
    if sums_at is not None:
        b[sums_at:sums_at + len(sums)] = sums
    struct.pack_into("=I", b, sum_at, h(sums))
elf_off, elf_size = struct.unpack_from("=QQ", b, 80)
if elf_size:
    forge(elf_off, elf_size, 96)
for i in range(ncus):
    off, size = struct.unpack_from("=QQ", b, 168 + 24 * i)
    if size:
        forge(off, size, 168 + 24 * i + 16, (off + size + 7) & ~7)
b[100:104] = bytes(4)
b[100:104] = struct.pack("=I", zlib.crc32(bytes(b[:168 + 24 * (ncus + nranges)])))
open(sys.argv[2], "wb").write(b)
PYEOF
	# plant MODE [OWNER]: forged.idx as the index, renamed into place as a
	# writer would.
	plant() {
		cp forged.idx "$idx.t" && chmod "$1" "$idx.t" && { [ -z "${2:-}" ] || chown "$2" "$idx.t"; } &&
			mv "$idx.t" "$idx"
	}
	tl_case "a forged index of ours is loaded (the control)"
	plant 0644
	ds symbolize -v -f -e prog "$work" >forged.out 2>forged.log
	[ "$(head -1 forged.out)" = pwnd ] || fail "the forgery was not used: $(cat forged.out forged.log | head -5)"
	tl_case_end
	for m in "0666 writable by everyone" "0664 writable by its group" "0602 writable by everyone"; do
		mode=${m%% *}
		tl_case "a forged index of mode $mode: not used, with a warning"
		plant "$mode"
		answers "mode$mode"
		grep -q "saved index $idx: ${m#* } (mode $mode): not used" "mode$mode.log" ||
			fail "no warning: $(grep -i index "mode$mode.log" | head -3)"
		# (That batch saved a good index over it.)  Said without -v too:
		# a warning.
		plant "$mode"
		ds symbolize -f -e prog "$work" >quiet.out 2>quiet.err
		[ "$(head -1 quiet.out)" = work ] || fail "without -v: $(cat quiet.out)"
		grep -q "saved index $idx: ${m#* }" quiet.err || fail "not said without -v: $(cat quiet.err)"
		tl_case_end
	done
	tl_case "a forged index owned by another uid: not used, with a warning"
	if [ "$(id -u)" = 0 ]; then
		plant 0644 nobody
		answers owner
		grep -Eq "saved index $idx: owned by uid $(id -u nobody), not by you \(uid 0\) or root: not used" owner.log ||
			fail "no warning: $(grep -i index owner.log | head -3)"
	else
		echo "skip another uid's index: needs root to chown"
	fi
	tl_case_end
	rm -f "$idx"
	ds index prog >/dev/null 2>&1
else
	echo "skip the forged index: no python3 with xxhash"
fi

# The index directory reached through a symlink: $XDG_CACHE_HOME/dsostore
# planted as one (anyone can in a sticky /tmp), to a directory holding the
# forged index; and $DSOSTORE_SYMINDEX_PATH's last component a symlink.
# Neither is followed: nothing is read from it or written to it.
tl_case "a symlinked index directory is not followed"
mkdir -p xdg planted/index
chmod 0700 planted planted/index
if [ -f forged.idx ]; then cp forged.idx "planted/index/$bid"; else cp first "planted/index/$bid"; fi
cp "planted/index/$bid" planted.idx
ln -sfn "$T/planted" xdg/dsostore
XDG_CACHE_HOME=$T/xdg DSOSTORE_SYMINDEX_PATH='' answers xdglink
grep -q "index directory $T/xdg/dsostore is a symbolic link: not followed" xdglink.log ||
	fail "no warning: $(grep -i index xdglink.log | head -3)"
XDG_CACHE_HOME=$T/xdg DSOSTORE_SYMINDEX_PATH='' ds index prog >xdglink-index.out 2>&1
[ "$(ls planted/index)" = "$bid" ] && cmp -s planted.idx "planted/index/$bid" ||
	fail "written through the symlink: $(ls -l planted/index)"
ln -sfn "$T/planted/index" linkidx
DSOSTORE_SYMINDEX_PATH=$T/linkidx answers lastlink
grep -q "index directory $T/linkidx is a symbolic link: not followed" lastlink.log ||
	fail "no warning: $(grep -i index lastlink.log | head -3)"
# ...while the directory the user named may be one (a cache moved to a
# bigger disk): only what dsostore makes under it is walked so.
mkdir -p realxdg && ln -sfn "$T/realxdg" xdguser
XDG_CACHE_HOME=$T/xdguser DSOSTORE_SYMINDEX_PATH='' ds index prog >userlink.out 2>userlink.err ||
	fail "index under a symlinked XDG_CACHE_HOME: $(cat userlink.err)"
[ -f "realxdg/dsostore/index/$bid" ] || fail "not saved under the user's symlinked XDG_CACHE_HOME"
tl_case_end

# A blob's bytes flipped (b.c's CU, found through the ranges table): its
# CRC no longer matches when a lookup first needs it, and that CU is built
# from the DWARF instead.  Every address answers as addr2line, and the
# complete index replaces the damaged file.
tl_case "a flipped blob byte: that CU built from the DWARF, every answer right, the file mended"
other=0x$(nm prog | awk '$3 == "other" {print $1}')
python3 - "$idx" "$other" <<'EOF' || fail "could not flip"
import struct, sys
p, addr = sys.argv[1], int(sys.argv[2], 16)
b = bytearray(open(p, "rb").read())
ncus, nranges = struct.unpack_from("=II", b, 56)
cu = None
for i in range(nranges):
    lo, hi, c, _ = struct.unpack_from("=QQII", b, 168 + 24 * ncus + 24 * i)
    if lo <= addr < hi:
        cu = c
off, size = struct.unpack_from("=QQ", b, 168 + 24 * cu)
assert size, "no blob for other()"
b[off + size // 2] ^= 0xff
open(p + ".t", "wb").write(b)
EOF
mv "$idx.t" "$idx"
a_addrs=$(for f in work main; do printf '0x%s ' "$(nm prog | awk -v f=$f '$3 == f {print $1}')"; done)
# shellcheck disable=SC2086
addr2line -f -i -e prog $a_addrs >a.expected
# shellcheck disable=SC2086
ds symbolize -f -i -e prog $a_addrs >a.out 2>a.err || fail "symbolize exited $?"
cmp -s a.expected a.out || fail "a.c's CU: $(diff a.expected a.out | head -5)"
addr2line -f -i -e prog "$other" >b.expected
ds symbolize -f -i -e prog "$other" >b.out 2>b.err || fail "symbolize of other() exited $?"
cmp -s b.expected b.out || fail "b.c's CU: $(diff b.expected b.out | head -5)"
# That lookup completed the index again: the file is written anew.
cmp -s first "$idx" || fail "the damaged file was not replaced by a good one"
tl_case_end
rm -f "$idx"
ds index prog >/dev/null 2>&1

# A big CU is checked chunk by chunk (64 KiB, each with its sum after the
# CU), as lookups read it: one address reads a few chunks, never the whole
# CU.  big.c is one CU of 3000 functions (a few hundred KB of index); a
# byte is flipped in a chunk of its line rows far from the first
# function's.  Asking for the first function: addr2line's answer, and the
# damage goes unnoticed (no warning, the file is not saved again: the
# chunk was not read).  Asking for every function: addr2line's answers
# (the CU built from the DWARF once the damaged chunk is read), a warning
# that says so, and the file saved again as the good one.
tl_case "a damaged chunk of a big CU: read only when a lookup reaches it"
{
	for i in $(seq 0 2999); do
		echo "__attribute__((noinline)) int f$i(int x) { return x * $i + (x >> 3) - $((i % 7)); }"
	done
	echo "int main(int argc, char **argv) { (void)argv; return f0(argc) + f2999(argc); }"
} >big.c
gcc -g -O1 -Wl,--build-id=sha1 -o big big.c || fail "could not build big.c"
bigid=$(tl_build_id big)
bigidx=$T/idx/$bigid
ds index big >/dev/null 2>&1 || fail "dsostore index big"
cp "$bigidx" big.good
first_fn=0x$(nm big | awk '$3 == "f0" {print $1}')
# shellcheck disable=SC2207
big_addrs=($(nm big | awk '$2 ~ /^[Tt]$/ && $3 ~ /^f[0-9]+$/ {print "0x" $1}'))
[ ${#big_addrs[@]} = 3000 ] || fail "${#big_addrs[@]} functions in big"
addr2line -f -e big "$first_fn" >big1.expected
addr2line -f -e big "${big_addrs[@]}" >bigall.expected
$PY - "$bigidx" <<'PYEOF' || fail "could not damage a chunk"
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
ncus = struct.unpack_from("=I", b, 56)[0]
cus = [struct.unpack_from("=QQ", b, 168 + 24 * i) for i in range(ncus)]
off, size = max(cus, key=lambda c: c[1])
# The blob: a 32-byte header (magic, nscopes, nlines, nseqs, pool_len),
# scopes of 48 bytes, then rows of 24: the middle of the rows.
magic, nscopes, nlines = struct.unpack_from("=III", b, off)
assert magic == 0x55435344, hex(magic)
rows = off + 32 + 48 * nscopes
assert size >= 4 * 65536, "the CU has %d bytes: too few chunks" % size
target = rows + 24 * (nlines // 2)
chunk = (target - off) // 65536
assert chunk >= 2, chunk
assert (rows - off) // 65536 < chunk, "the first rows share the chunk"
b[target] ^= 0x40
open(p + ".t", "wb").write(b)
PYEOF
mv "$bigidx.t" "$bigidx"
cp "$bigidx" big.damaged
ds symbolize -v -f -e big "$first_fn" >big1.out 2>big1.log || fail "symbolize exited $?"
cmp -s big1.expected big1.out || fail "f0: $(diff big1.expected big1.out | head -5)"
grep -q "saved index $bigidx: loaded" big1.log || fail "not loaded: $(grep -i index big1.log | head -3)"
grep -q "damaged" big1.log && fail "one address read the damaged chunk: $(grep damaged big1.log)"
cmp -s big.damaged "$bigidx" || fail "the file was saved again after one address"
ds symbolize -f -e big "${big_addrs[@]}" >bigall.out 2>bigall.log || fail "symbolize exited $?"
cmp -s bigall.expected bigall.out || fail "every function: $(diff bigall.expected bigall.out | head -5)"
grep -q "saved index of .*big: CU [0-9]* is damaged" bigall.log ||
	fail "no warning of the damage: $(head -3 bigall.log)"
cmp -s big.good "$bigidx" || fail "the damaged file was not replaced by the good one"
tl_case_end

tl_case "another debuginfo of the build ID: stale, not used"
cp prog split && objcopy --only-keep-debug split split.debug && objcopy --strip-debug split
mkdir -p dbg/.build-id/"${bid:0:2}" && cp split.debug dbg/.build-id/"${bid:0:2}/${bid:2}.debug"
# shellcheck disable=SC2086
"$DSOSTORE" symbolize -v -f -i -e split --debug-dir "$T/dbg" --perf-buildid-dir "" $addrs \
	>split.out 2>split.log
cmp -s expected split.out || fail "answers: $(diff expected split.out | head -5)"
grep -q "saved index $idx: .*of another debuginfo file" split.log ||
	fail "no 'another debuginfo' in the log: $(grep -i index split.log | head -3)"
grep -q "saved index $idx: loaded" split.log && fail "loaded the unstripped binary's index"
tl_case_end

tl_case "switched off: nothing read or written"
rm -f "$idx"
DSOSTORE_SYMINDEX=0 ds index prog >off-index.out 2>off-index.err && fail "index succeeded"
grep -q "not supported" off-index.err || fail "no reason: $(cat off-index.err)"
[ -e "$idx" ] && fail "written"
tl_case_end

# (A stream saving a completed index by itself: test_symfile.c, through
# ds_dso_symbolize_batch(), which the CLI's stream does not use yet.)
for a in $addrs; do echo "$T/prog $a"; done >stream.in

if [ "$(id -u)" != 0 ]; then
	tl_case "a read-only index directory costs nothing"
	rm -f "$idx"
	chmod 0500 "$T/idx"
	answers readonly
	ds symbolize -f -i <stream.in >ro-stream.out 2>ro-stream.err || fail "stream: $(tail -3 ro-stream.err)"
	cmp -s expected ro-stream.out || fail "stream answers"
	[ -s ro-stream.err ] && fail "said something: $(head -3 ro-stream.err)"
	chmod 0700 "$T/idx"
	tl_case_end
fi

tl_case "fetched debuginfo: the index goes in its cache entry"
mkdir -p srv/buildid/"$bid"
cp split.debug srv/buildid/"$bid"/debuginfo
DEBUGINFOD_URLS="file://$T/srv" ds index split >fetched.out 2>fetched.err ||
	fail "index: $(cat fetched.err)"
entry=$T/dcache/$bid/dsostore-index
[ "$(cat fetched.out)" = "$bid $entry" ] || fail "printed '$(cat fetched.out)'"
[ -f "$entry" ] && [ "$(stat -c %a "$entry")" = 400 ] || fail "no 0400 $entry"
# shellcheck disable=SC2086
DEBUGINFOD_URLS="file://$T/srv" ds symbolize -v -f -i -e split $addrs >fetched2.out 2>fetched2.log
cmp -s expected fetched2.out || fail "answers: $(diff expected fetched2.out | head -5)"
grep -q "saved index $entry: loaded" fetched2.log || fail "not loaded from the entry"
tl_case_end

tl_case "cache clean: indexes (and kernel symbols) unused for max_unused_age_s go, used ones stay"
ds index prog >/dev/null 2>&1
touch -a -d '8 days ago' "$entry" "$T/dcache/$bid/debuginfo"
"$DSOSTORE" cache clean >clean.out 2>clean.err || fail "clean: $(cat clean.err)"
[ -e "$entry" ] && fail "the entry's old index stayed"
[ -e "$idx" ] || fail "a fresh local index went"
touch -a -d '8 days ago' "$idx"
# Mapping it is a use: atime moves.
answers touched
[ "$(($(date +%s) - $(stat -c %X "$idx")))" -lt 3600 ] || fail "loading did not touch its atime"
touch -a -d '8 days ago' "$idx"
# A kernel's cached symbols (lib/live/kernel.c) go by the same rule; a name
# that is not ours stays.
kdir=$(dirname "$idx")
echo x >"$kdir/$bid.kallsyms"
echo x >"$kdir/$bid.other"
touch -a -d '8 days ago' "$kdir/$bid.kallsyms" "$kdir/$bid.other"
"$DSOSTORE" cache clean >/dev/null 2>&1
[ -e "$idx" ] && fail "an old local index stayed"
[ -e "$kdir/$bid.kallsyms" ] && fail "an old kernel symbol file stayed"
[ -e "$kdir/$bid.other" ] || fail "a file not ours went"
tl_case_end

# A writer killed (kill -9) between its write and its rename leaves its
# temporary file "<name>.XXXXXX", full size; an index's is already made
# the index's mode (0644 here) by then.  A clean removes those nobody
# holds (the writer's flock goes with the writer), not one a live writer
# holds (flock(1) standing in for it), nor one written within the last
# minute (docs/debuginfod.md, "Temporary files").
tl_case "cache clean: temporary files of dead writers go, a held or fresh one stays"
if command -v flock >/dev/null; then
	E=$T/dcache/$bid
	mkdir -p "$E"
	plant() { # file mode [date]: 64 KiB written then
		head -c 65536 /dev/zero >"$1"
		chmod "$2" "$1"
		touch -d "${3:-2020-01-01}" "$1"
	}
	plant "$kdir/$bid.q1w2e3" 0644
	plant "$kdir/$bid.kallsyms.a1b2c3" 0600
	plant "$E/debuginfo.z9y8x7" 0600
	plant "$E/dsostore-index.k3j4h5" 0600
	plant "$kdir/$bid.h0ld3r" 0644
	plant "$E/debuginfo.h0ld3r" 0600
	plant "$kdir/$bid.fr3sh1" 0600 now
	# A writer killed between its open() and its first write leaves an
	# empty one: no miss (those are the entry's own name, 0400), and gone
	# once past the grace though younger than cache_miss_s (600 s).
	: >"$E/executable.e4p7y0"
	chmod 0600 "$E/executable.e4p7y0"
	touch -d '-5 minutes' "$E/executable.e4p7y0"
	(
		exec 8<"$kdir/$bid.h0ld3r" 9<"$E/debuginfo.h0ld3r"
		flock -x 8 && flock -x 9 && exec sleep 300
	) &
	holder=$!
	for _ in $(seq 200); do
		flock -n "$E/debuginfo.h0ld3r" true || break
		sleep 0.05
	done
	flock -n "$E/debuginfo.h0ld3r" true && fail "the holder has no lock"
	"$DSOSTORE" cache clean >clean.out 2>clean.err || fail "clean: $(cat clean.err)"
	for f in "$kdir/$bid.q1w2e3" "$kdir/$bid.kallsyms.a1b2c3" "$E/debuginfo.z9y8x7" \
		"$E/dsostore-index.k3j4h5" "$E/executable.e4p7y0"; do
		[ -e "$f" ] && fail "orphaned ${f#"$T"/} stayed"
	done
	for f in "$kdir/$bid.h0ld3r" "$E/debuginfo.h0ld3r" "$kdir/$bid.fr3sh1"; do
		[ -e "$f" ] || fail "${f#"$T"/} went (held, or fresh)"
	done
	[ -e "$kdir/$bid.other" ] || fail "a file not ours went"
	# The writer gone, its files are orphans too.
	kill "$holder"
	wait "$holder" 2>/dev/null
	"$DSOSTORE" cache clean >clean.out 2>clean.err || fail "clean: $(cat clean.err)"
	for f in "$kdir/$bid.h0ld3r" "$E/debuginfo.h0ld3r"; do
		[ -e "$f" ] && fail "${f#"$T"/} stayed after its writer died"
	done
	[ -e "$kdir/$bid.fr3sh1" ] || fail "a fresh temporary file went"
	tl_case_end
else
	echo "skip $CASE (no flock(1))"
fi

tl_finish symfile
