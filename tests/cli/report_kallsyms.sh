#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Kernel samples named from /proc/kallsyms, and from dsostore's cache of
# this boot's core kernel symbols (lib/live/kernel.c), against perf report.
# A workload that spends its time in system calls is recorded with
# perf record -e cpu-clock; then every kernel row of
# `perf report --stdio --sort dso,sym` must be ours, same symbol, same
# share (0.01 points: one unit of the last digit):
#  - cold: no cache file (it is written: <kernel-build-id>.kallsyms);
#  - warm: the cache file read, /proc/kallsyms not opened (strace);
#  - a corrupted cache file: a warning, the same rows, the file rewritten;
#  - a cache file of another boot (its boot ID changed): the same rows,
#    silently, and the file rewritten with this boot's ID.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"
export PATH=$PATH:/usr/sbin:/sbin

: "${DSOSTORE:?DSOSTORE must name the CLI}"
tl_need perf gcc python3 strace

tl_tmpdir dskallsyms
cd "$tmp" || exit 2
export HOME=$tmp/home DSOSTORE_SYMINDEX_PATH=$tmp/derived DEBUGINFOD_URLS=
mkdir -p "$HOME"
unset PERF_BUILDID_DIR
tl_sanitizer_exitcodes
skip() {
	echo "SKIP: $*" >&2
	exit 77
}

[ -r /sys/kernel/notes ] || skip "no /sys/kernel/notes: the running kernel has no build ID to key on"
if [ "$(awk 'NR==1{print $1}' /proc/kallsyms)" = 0000000000000000 ]; then
	skip "/proc/kallsyms hides its addresses here (kptr_restrict)"
fi

cat >sys.c <<'EOF'
#include <fcntl.h>
#include <unistd.h>

int main(void)
{
	char buf[4096] = { 0 };
	int fd = open("/dev/null", O_WRONLY);

	for (long i = 0; i < 400000; i++) {
		(void)!write(fd, buf, sizeof(buf));
		(void)getppid();
	}
	return 0;
}
EOF
gcc -O2 -o sys sys.c || fail "cannot build the workload"
if ! perf record -N -e cpu-clock -F 4000 -o k.data -- ./sys >rec.log 2>&1; then
	skip "perf record -e cpu-clock is not permitted here: $(tail -2 rec.log)"
fi
perf report -i k.data --stdio --sort dso,sym >perf.out 2>perf.err ||
	fail "perf report failed: $(tail -3 perf.err)"

# kernel_rows FILE: "SHARE SYMBOL" of each [kernel.kallsyms] row.
kernel_rows() {
	awk '$2 == "[kernel.kallsyms]" && $3 == "[k]" { print $1, $4 }' "$1"
}
kernel_rows perf.out >perf.rows
nk=$(wc -l <perf.rows)
[ "$nk" -ge 3 ] || skip "perf report shows only $nk kernel rows: too few kernel samples here"

compare() { # NAME: our report NAME.out against perf's rows
	kernel_rows "$1.out" >"$1.rows"
	python3 "$DS_SRC/tests/lib/rows_cmp.py" perf.rows "$1.rows" "$1" ||
		fail "$1: kernel rows differ from perf report's (above)"
}

report() { # NAME [strace]: our report into NAME.out, NAME.err
	local name=$1
	shift
	"$@" "$DSOSTORE" report --no-fetch -v -i k.data --sort dso,sym >"$name.out" 2>"$name.err" ||
		fail "$name: report failed: $(tail -3 "$name.err")"
}

report cold
compare cold
cache=$(ls "$tmp"/derived/*.kallsyms 2>/dev/null) || fail "cold: no kallsyms cache file written"
bid=$(python3 - <<'EOF'
data = open('/sys/kernel/notes', 'rb').read()
off = 0
while off + 12 <= len(data):
    namesz, descsz, typ = (int.from_bytes(data[off + i:off + i + 4], 'little') for i in (0, 4, 8))
    name_off = off + 12
    desc_off = name_off + ((namesz + 3) & ~3)
    if typ == 3 and data[name_off:name_off + namesz].rstrip(b'\0') == b'GNU':
        print(data[desc_off:desc_off + descsz].hex())
        break
    off = desc_off + ((descsz + 3) & ~3)
EOF
)
[ "$(basename "$cache")" = "$bid.kallsyms" ] ||
	fail "cache file $(basename "$cache"): not named after the kernel's build ID $bid"

# LeakSanitizer cannot run under ptrace: leaks are looked for in the
# other runs.
report warm env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -e trace=openat -o warm.strace
compare warm
! grep -q '/proc/kallsyms' warm.strace ||
	fail "warm: /proc/kallsyms was read although this boot's cache file is there"
grep -q "$(basename "$cache")" warm.strace || fail "warm: the cache file was not opened"

# A byte of the symbol table changed: the checksum says so.
python3 - "$cache" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
b[len(b) // 2] ^= 0x40
open(p, 'wb').write(bytes(b))
EOF
sum_bad=$(cksum <"$cache")
report corrupt
compare corrupt
grep -q 'kallsyms cache.*checksum mismatch; read again' corrupt.err ||
	fail "corrupt: no warning about the damaged cache file: $(cat corrupt.err)"
[ "$(cksum <"$cache")" != "$sum_bad" ] || fail "corrupt: the damaged cache file was not rewritten"

# Another boot: the boot ID in the header (after magic, version, count,
# names_len, core_end, ref_addr and the 64-byte ref name: offset 104).
python3 - "$cache" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
b[104:104 + 8] = b'00000000'
open(p, 'wb').write(bytes(b))
EOF
report reboot
compare reboot
! grep -q 'kallsyms cache' reboot.err || fail "reboot: another boot's file is no error: $(cat reboot.err)"
grep -q "$(cat /proc/sys/kernel/random/boot_id)" "$cache" ||
	fail "reboot: the cache file does not hold this boot's ID after the report"

tl_finish report_kallsyms "$nk kernel rows as perf report gives them: cold, warm, corrupted and another boot's cache"
