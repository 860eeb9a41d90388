#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# contrib/dsostore-serve.service is a unit systemd accepts: `systemd-analyze
# verify` (its directives, the ExecStart binary, the man page it names).
# The binary is this build's CLI and the man page this build's, since
# neither is installed where the unit names them.  Nothing else about the
# unit is tested here.
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_need systemd-analyze
tl_tmpdir dsunit
mkdir -p "$tmp/man/man1"
cp "$DS_BUILD/man/dsostore.1" "$tmp/man/man1/" || { fail "no man page in the build"; exit 1; }
sed "s|/usr/local/bin/dsostore|$DSOSTORE|" "$DS_SRC/contrib/dsostore-serve.service" \
	>"$tmp/dsostore-serve.service"
grep -q "^ExecStart=$DSOSTORE serve " "$tmp/dsostore-serve.service" ||
	fail "the unit's ExecStart is not /usr/local/bin/dsostore serve"
MANPATH=$tmp/man systemd-analyze verify "$tmp/dsostore-serve.service" >"$tmp/verify.out" 2>&1 ||
	fail "systemd-analyze verify: $(head -10 "$tmp/verify.out")"
# It prints warnings and still succeeds: none either.
[ ! -s "$tmp/verify.out" ] || fail "systemd-analyze verify says: $(head -10 "$tmp/verify.out")"
tl_finish serve_unit
