#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# IMA policy and verification of downloads, as elfutils >= 0.192 reads
# DEBUGINFOD_URLS ("ima:enforcing" / "ima:ignore" words before servers,
# DEBUGINFOD_IMA_CERT_PATH), and the header cache of elfutils 0.193
# (<cache>/<build-id>/hdr-<entry>).
#
# Keys and certificates are made here with openssl; files are signed with
# evmctl ima_sign --sigfile (ima-evm-utils), as a distribution signs the
# files of its packages; dsserver sends <file>.sig as
# X-DEBUGINFOD-IMASIGNATURE (hex), as debuginfod does from an IMA-signed
# RPM.  The verdict oracle is evmctl ima_verify with the same certificate:
# Debian's elfutils 0.192 (debuginfod-find-0.192) is built without IMA
# verification (it says so, and treats every ima: word as ima:ignore; see
# docs/oracles.md), so it can only be the oracle of the URL syntax: no
# "ima:" word is a server.
#   (a) good signature, wrong key, corrupted file, no signature: dsostore
#       under ima:enforcing accepts exactly what evmctl ima_verify accepts;
#       a refused file is not cached (no file, no miss); -v says why
#   (b) ima:ignore (and no ima: word) accepts all four
#   (c) policies per server: "ima:enforcing A ima:ignore B"
#   (d) an unknown ima: word is skipped with a message, never asked as a
#       server, by dsostore and by debuginfod-find-0.192 alike
#   (e) no section query to an enforcing server: as elfutils'
#       debuginfod_find_section(), the whole debuginfo is fetched (and
#       verified) and the section cut from it, from the executable when
#       the debuginfo has it without bytes (.text of an --only-keep-debug
#       file); the bytes are objcopy --dump-section's; an unsigned
#       debuginfo gives no section and caches nothing; a section is cut
#       from a cached debuginfo without any request; an ignore server is
#       asked for the section itself
#   (e2) the whole file is taken too when a server answers 503 for the
#       section (as debuginfod-find-0.192 does), and when an enforcing
#       server was skipped and an ignore one said 404
#   (f) the header cache: what dsostore writes is, byte for byte, what
#       elfutils 0.193 writes for the same answer (its layout, from its
#       source: the x-debuginfod-* lines without CR, then a NUL); one
#       written as 0.193 writes it is read by dsostore without a request
#   (g) dsostore serve over an ima:enforcing upstream relays no refused
#       file, answers a section cut from the verified debuginfo (503 when
#       it has none verified), and relays the signature
set -u
. "$DS_SRC/tests/lib/testlib.bash"
tl_no_proxy

: "${DSOSTORE:?DSOSTORE must name the dsostore CLI}"
tl_need gcc evmctl openssl curl python3 eu-readelf objcopy strip
tl_need_dsserver

tl_sanitizer_exitcodes
tl_tmpdir dsima
tl_client_env 10
export DEBUGINFOD_RETRY_LIMIT=0
eq() { # what expected actual
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
}

# ---- keys: ours (in DEBUGINFOD_IMA_CERT_PATH, DER and PEM) and another's
for k in k1 k2 k3; do
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/$k.key" -out "$tmp/$k.pem" \
		-days 30 -subj "/CN=dsostore test $k" 2>/dev/null ||
		{ echo "FAIL: openssl cannot make a key" >&2; exit 1; }
done
mkdir -p "$tmp/certs" "$tmp/certs2"
openssl x509 -in "$tmp/k1.pem" -outform DER -out "$tmp/certs/k1.der"
cp "$tmp/k3.pem" "$tmp/certs2/k3.crt" # a PEM, in a second directory
echo "not a certificate" >"$tmp/certs/junk.pem"

# ---- one program per case (distinct build IDs), signed as the case says
srv=$tmp/srv
mkdir -p "$srv"
cases=(good pem wrongkey corrupt nosig)
declare -A bid
for c in "${cases[@]}"; do
	printf 'int %s_v(int x) { return x * %d; }\nint main(void) { return %s_v(1); }\n' \
		"$c" "${#c}" "$c" >"$tmp/$c.c"
	gcc -g -O1 -o "$srv/$c" "$tmp/$c.c" || fail "cannot compile $c"
	bid[$c]=$(tl_build_id "$srv/$c")
done
sign() { # file key
	evmctl -a sha256 ima_sign --sigfile --key "$2" "$1" >/dev/null 2>&1 || fail "evmctl cannot sign $1"
}
sign "$srv/good" "$tmp/k1.key"
sign "$srv/pem" "$tmp/k3.key"
sign "$srv/wrongkey" "$tmp/k2.key"
sign "$srv/corrupt" "$tmp/k1.key"
# the file changed after it was signed: one byte of its .comment
python3 - "$srv/corrupt" <<'EOF' || fail "cannot corrupt the file"
import sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
i = d.index(b"GCC: (")
d[i] = ord("g")
open(p, "wb").write(bytes(d))
EOF
# split: a stripped executable and its --only-keep-debug debuginfo (where
# .text is SHT_NOBITS), both signed
printf 'int split_v(int x) { return x * 5; }\nint main(void) { return split_v(1); }\n' >"$tmp/split.c"
gcc -g -O1 -o "$tmp/split" "$tmp/split.c" || fail "cannot compile split"
objcopy --only-keep-debug "$tmp/split" "$srv/split.debug" &&
	strip -g -o "$srv/split" "$tmp/split" || fail "cannot split split"
bid[split]=$(tl_build_id "$srv/split")
sign "$srv/split" "$tmp/k1.key"
sign "$srv/split.debug" "$tmp/k1.key"
[ "$(eu-readelf -S "$srv/split.debug" | awk '$2 == ".text" { print $3 }')" = NOBITS ] ||
	fail "split.debug's .text is not NOBITS: the case tests nothing"
[ "$fails" -eq 0 ] || exit 1

# The oracle: evmctl ima_verify with the certificates of the cert path
# (given as DER: evmctl 1.4 reads no PEM certificate).
openssl x509 -in "$tmp/k3.pem" -outform DER -out "$tmp/k3.der"
declare -A want
for c in "${cases[@]}"; do
	want[$c]=refused
	for cert in "$tmp/certs/k1.der" "$tmp/k3.der"; do
		if [ -e "$srv/$c.sig" ] &&
			evmctl -a sha256 ima_verify --sigfile --key "$cert" "$srv/$c" >/dev/null 2>&1; then
			want[$c]=accepted
		fi
	done
done
eq "evmctl's verdicts" "good=accepted pem=accepted wrongkey=refused corrupt=refused nosig=refused" \
	"$(for c in "${cases[@]}"; do printf '%s=%s ' "$c" "${want[$c]}"; done | sed 's/ $//')"

tl_start_dsserver port a --max-runtime 120 "$srv" || exit 1
tl_start_dsserver portb b --max-runtime 120 "$srv" || exit 1
A=http://127.0.0.1:$port B=http://127.0.0.1:$portb
reqs() { # url path-prefix
	curl -s --noproxy '*' "$1/control/stats?prefix=$2"
}

# fetch CACHE URLS ARGS...: dsostore fetch -v; status in $rc, stderr in $tmp/err
fetch() {
	rc=0
	DEBUGINFOD_CACHE_PATH=$1 DEBUGINFOD_URLS=$2 DEBUGINFOD_IMA_CERT_PATH=$tmp/certs:$tmp/certs2 \
		"$DSOSTORE" fetch -v --no-progress "${@:3}" >"$tmp/out" 2>"$tmp/err" || rc=$?
}

tl_case a-enforcing
for c in "${cases[@]}"; do
	fetch "$tmp/c-enf" "ima:enforcing $A" --executable "${bid[$c]}"
	got=refused
	[ $rc = 0 ] && got=accepted
	eq "$c under ima:enforcing" "${want[$c]}" "$got"
	f=$tmp/c-enf/${bid[$c]}/executable
	if [ "${want[$c]}" = refused ]; then
		eq "$c: exit status of a refusal" 1 "$rc"
		[ ! -e "$f" ] || fail "$c: refused, but cached"
		grep -q 'refused (ima:enforcing)' "$tmp/err" || fail "$c: -v does not say why: $(cat "$tmp/err")"
		grep -q "no valid IMA signature" "$tmp/err" || fail "$c: the error is not the IMA one"
	else
		cmp -s "$f" "$srv/$c" || fail "$c: the cached file is not the served one"
		grep -q 'valid IMA signature' "$tmp/err" || fail "$c: -v does not say it was verified"
	fi
done
grep -q "junk.pem: no certificate or public key" "$tmp/err" || fail "a junk .pem is not reported"
# why, in the words of the refusal
fetch "$tmp/c-enf" "ima:enforcing $A" --executable "${bid[wrongkey]}"
k2id=$(openssl x509 -in "$tmp/k2.pem" -noout -ext subjectKeyIdentifier | tail -1 | tr -d ' :' | tr A-F a-f)
grep -q "signed by key ${k2id: -8}, not one of DEBUGINFOD_IMA_CERT_PATH's" "$tmp/err" ||
	fail "wrongkey: the key ID (${k2id: -8}, the SKID's last 4 bytes) is not named: $(cat "$tmp/err")"
fetch "$tmp/c-enf" "ima:enforcing $A" --executable "${bid[nosig]}"
grep -q "no X-DEBUGINFOD-IMASIGNATURE" "$tmp/err" || fail "nosig: not said"
fetch "$tmp/c-enf" "ima:enforcing $A" --executable "${bid[corrupt]}"
grep -q "signature by key .* does not verify" "$tmp/err" || fail "corrupt: not said"
# a refused file is asked again next time (no miss was cached)
n0=$(reqs "$A" "/buildid/${bid[nosig]}/executable")
fetch "$tmp/c-enf" "ima:enforcing $A" --executable "${bid[nosig]}"
eq "requests for a refused file, asked again" $((n0 + 1)) "$(reqs "$A" "/buildid/${bid[nosig]}/executable")"
# a bad header value: refused, said
echo "03zz" >"$srv/nosig.imasig"
fetch "$tmp/c-enf" "ima:enforcing $A" --executable "${bid[nosig]}"
[ $rc = 1 ] && grep -q "IMASIGNATURE is a signature that is not hex" "$tmp/err" ||
	fail "a non-hex signature: $(cat "$tmp/err")"
rm -f "$srv/nosig.imasig"
tl_case_end

tl_case b-ignore
for urls in "$A" "ima:ignore $A" "ima:enforcing ima:ignore $A"; do
	rm -rf "$tmp/c-ign"
	for c in "${cases[@]}"; do
		fetch "$tmp/c-ign" "$urls" --executable "${bid[$c]}"
		eq "$c under '${urls%% http*}'" 0 "$rc"
	done
done
tl_case_end

tl_case c-per-server
# nosig: refused by A (enforcing), taken from B (ignore), whichever answers first
rm -rf "$tmp/c-per"
fetch "$tmp/c-per" "ima:enforcing $A ima:ignore $B" --executable "${bid[nosig]}"
eq "nosig from 'ima:enforcing A ima:ignore B'" 0 "$rc"
cmp -s "$tmp/c-per/${bid[nosig]}/executable" "$srv/nosig" || fail "nosig not cached from B"
# and with B enforcing too, refused by both
rm -rf "$tmp/c-per"
fetch "$tmp/c-per" "ima:enforcing $A $B" --executable "${bid[nosig]}"
eq "nosig with both servers enforcing: exit" 1 "$rc"
tl_case_end

tl_case d-unknown-word
rm -rf "$tmp/c-unk"
fetch "$tmp/c-unk" "ima:permissive $A" --executable "${bid[nosig]}"
eq "fetch with ima:permissive" 0 "$rc"
grep -q 'IMA mode "ima:permissive" not recognized' "$tmp/err" ||
	fail "the unknown word is not reported: $(cat "$tmp/err")"
grep -q 'ima:permissive.*: .*from\|from ima:permissive' "$tmp/err" &&
	fail "ima:permissive was asked as a server"
# the peer: same URLs, same result, and its own message
find012=$(tl_peer debuginfod-find-0.192) || find012=
if [ -n "$find012" ]; then
	rm -rf "$tmp/c-unk2"
	rc=0
	DEBUGINFOD_CACHE_PATH=$tmp/c-unk2 DEBUGINFOD_URLS="ima:permissive $A" DEBUGINFOD_VERBOSE=1 \
		"$find012" executable "${bid[nosig]}" >"$tmp/out012" 2>"$tmp/err012" || rc=$?
	eq "debuginfod-find-0.192 with ima:permissive" 0 "$rc"
	grep -q "init server 0 $A" "$tmp/err012" || fail "0.192's first server is not $A"
	grep -q "init server 1" "$tmp/err012" && fail "0.192 made ima:permissive a server"
	# Debian's build: no IMA verification (docs/oracles.md)
	grep -q "IMA signature verification is not enabled" "$tmp/err012" ||
		echo "note: debuginfod-find-0.192 has IMA verification now: make it this test's oracle"
fi
tl_case_end

tl_case e-sections
# dump FILE SECTION: the section's bytes, as objcopy gives them, in a file
dump() {
	objcopy --dump-section "$2=$tmp/dump$2" "$1" "$tmp/junk" || fail "objcopy cannot dump $2 of $1"
	echo "$tmp/dump$2"
}
# got PATH-OF-OUT: the path dsostore printed
printed() { cut -d' ' -f2- "$tmp/out"; }
reqs_of() { # build-id: section debuginfo executable requests to A, one line
	echo "$(reqs "$A" "/buildid/$1/section") $(reqs "$A" "/buildid/$1/debuginfo") $(reqs "$A" "/buildid/$1/executable")"
}
delta() { # before after: what was asked in between, "sections debuginfo executable"
	local -a a b
	read -ra a <<<"$1"
	read -ra b <<<"$2"
	echo "$((b[0] - a[0])) $((b[1] - a[1])) $((b[2] - a[2]))"
}
# section_ok WHAT CACHE URLS BUILD-ID SECTION REQUESTS FROM: dsostore
# fetch --section exits 0, made REQUESTS to A ("sections debuginfo
# executable"), and printed and cached as section-SECTION the bytes
# objcopy dumps of SECTION of FROM
section_ok() {
	local what=$1 cache=$2 id=$4 sec=$5 n0
	n0=$(reqs_of "$id")
	fetch "$cache" "$3" --section "$sec" "$id"
	eq "$what: exit" 0 "$rc"
	eq "$what: requests to A (section debuginfo executable)" "$6" "$(delta "$n0" "$(reqs_of "$id")")"
	eq "$what: the path" "$cache/$id/section-$sec" "$(printed)"
	cmp -s "$(dump "$7" "$sec")" "$cache/$id/section-$sec" ||
		fail "$what: section-$sec is not objcopy's $sec of $7"
}
g=${bid[good]}
# enforcing, a signed debuginfo: the section cut from it, one request
rm -rf "$tmp/c-sec"
section_ok "a section under ima:enforcing" "$tmp/c-sec" "ima:enforcing $A" "$g" .debug_info "0 1 0" "$srv/good"
grep -q "not asked for section .debug_info.*ima:enforcing" "$tmp/err" || fail "-v does not say why"
grep -q "$g/debuginfo: valid IMA signature" "$tmp/err" || fail "the debuginfo was not verified"
eq "the section's mode" 400 "$(stat -c %a "$tmp/c-sec/$g/section-.debug_info")"
! compgen -G "$tmp/c-sec/$g/section-.debug_info.??????" >/dev/null ||
	fail "a temporary file was left: $(ls "$tmp/c-sec/$g")"
# another section of it: cut from the cached debuginfo, no request at
# all (elfutils' cache_find_section()); under ima:ignore as well
for pol in enforcing ignore; do
	rm -f "$tmp/c-sec/$g/"section-*.comment # (and 0.192's name, linked to it)
	section_ok "a section of a cached debuginfo (ima:$pol)" "$tmp/c-sec" "ima:$pol $A" "$g" .comment \
		"0 0 0" "$srv/good"
done
# a section the cached debuginfo does not have: confirmed absent, not asked
n0=$(reqs_of "$g")
fetch "$tmp/c-sec" "ima:ignore $A" --section .no_such "$g"
eq "a section absent from the cached debuginfo: exit" 1 "$rc"
eq "a section absent from the cached debuginfo: requests" "0 0 0" "$(delta "$n0" "$(reqs_of "$g")")"
[ ! -e "$tmp/c-sec/$g/section-.no_such" ] || fail "a miss or file was cached for .no_such"

# SHT_NOBITS in the debuginfo: from the executable, verified too
s=${bid[split]}
rm -rf "$tmp/c-split"
section_ok ".text of a split program under ima:enforcing" "$tmp/c-split" "ima:enforcing $A" "$s" .text \
	"0 1 1" "$srv/split"
grep -q "$s/executable: valid IMA signature" "$tmp/err" || fail "the executable was not verified"
section_ok ".debug_line of a split program, both files cached" "$tmp/c-split" "ima:enforcing $A" "$s" \
	.debug_line "0 0 0" "$srv/split.debug"

# no valid signature on the debuginfo (nor on the executable): no
# section, nothing cached, the IMA refusal said
for c in nosig wrongkey; do
	rm -rf "$tmp/c-ref"
	fetch "$tmp/c-ref" "ima:enforcing $A" --section .debug_info "${bid[$c]}"
	eq "$c: a section under ima:enforcing: exit" 1 "$rc"
	grep -q "no valid IMA signature" "$tmp/err" || fail "$c: the error is not the IMA one: $(cat "$tmp/err")"
	grep -q "${bid[$c]}/debuginfo refused (ima:enforcing)" "$tmp/err" || fail "$c: the debuginfo's refusal is not said"
	[ -z "$(ls -A "$tmp/c-ref/${bid[$c]}" 2>/dev/null)" ] ||
		fail "$c: refused, but cached: $(ls -A "$tmp/c-ref/${bid[$c]}")"
done

# ima:ignore, nothing cached: the section asked as it always was
rm -rf "$tmp/c-ign"
section_ok "a section from an ignore server" "$tmp/c-ign" "ima:ignore $A" "$g" .debug_info "1 0 0" "$srv/good"
tl_case_end

tl_case e2-whole-file-when
# When the section is taken from the whole file besides "every server is
# enforcing": a server that answers 503 for it (debuginfod's "cannot
# give", which elfutils 0.192 also answers with the whole file: its
# debuginfod-find is the oracle here), and an enforcing server skipped
# while an ignore one says 404 (where 0.192 says "not found":
# docs/oracles.md).
fault() { curl -s --noproxy '*' "$1/control/fault?$2" >/dev/null || fail "cannot set a fault: $2"; }
onb() { # build-id: section and debuginfo requests to B
	echo "$(reqs "$B" "/buildid/$1/section") $(reqs "$B" "/buildid/$1/debuginfo")"
}
fault "$B" "bid=$g&kind=status&arg=503&artifact=section"
rm -rf "$tmp/c-503"
n0=$(onb "$g")
fetch "$tmp/c-503" "ima:ignore $B" --section .debug_line "$g"
eq "a section the server answers 503: exit" 0 "$rc"
cmp -s "$(dump "$srv/good" .debug_line)" "$tmp/c-503/$g/section-.debug_line" ||
	fail "503: section-.debug_line is not objcopy's"
eq "503: requests to B (section debuginfo)" "$(delta "$n0 0" "$(onb "$g") 0")" "1 1 0"
find012=$(tl_peer_or_none debuginfod-find-0.192)
if [ -n "$find012" ]; then
	rm -rf "$tmp/c-503eu"
	n0=$(onb "$g")
	f=$(DEBUGINFOD_CACHE_PATH=$tmp/c-503eu DEBUGINFOD_URLS=$B "$find012" section "$g" .debug_line 2>"$tmp/err012") ||
		fail "debuginfod-find-0.192 with a 503 for the section: $(tail -2 "$tmp/err012")"
	cmp -s "$tmp/dump.debug_line" "$f" || fail "0.192's section after a 503 is not objcopy's"
	eq "0.192: requests to B (section debuginfo)" "$(delta "$n0 0" "$(onb "$g") 0")" "1 1 0"
fi
fault "$B" "bid=$g&kind=clear"
# ima:enforcing A skipped, ima:ignore B says 404 (for everything of good)
fault "$B" "bid=$g&kind=status&arg=404"
rm -rf "$tmp/c-mix"
section_ok "enforcing A skipped, B 404" "$tmp/c-mix" "ima:enforcing $A ima:ignore $B" "$g" .debug_line \
	"0 1 0" "$srv/good"
fault "$B" "bid=$g&kind=clear"
tl_case_end

tl_case f-header-cache
# What elfutils 0.193 writes for an answer (debuginfod-client.c:
# header_callback keeps each response line that starts with
# "X-DEBUGINFOD" and ends in CR LF, the CR made LF; the block is written
# with its NUL to <entry dir>/hdr-<type>[-<suffix>]), from curl's view of
# the same answer.
rm -rf "$tmp/c-hdr"
fetch "$tmp/c-hdr" "ima:enforcing $A" --executable "${bid[good]}"
eq "fetch good" 0 "$rc"
curl -s --noproxy '*' -D "$tmp/hdrs" -o /dev/null "$A/buildid/${bid[good]}/executable"
{ grep -i '^X-DEBUGINFOD' "$tmp/hdrs" | tr -d '\r'; printf '\0'; } >"$tmp/want-hdr"
cmp "$tmp/want-hdr" "$tmp/c-hdr/${bid[good]}/hdr-executable" >/dev/null ||
	fail "hdr-executable is not elfutils 0.193's block for the answer"
grep -qa "^X-DEBUGINFOD-IMASIGNATURE: $(xxd -p "$srv/good.sig" | tr -d '\n')\$" "$tmp/c-hdr/${bid[good]}/hdr-executable" ||
	fail "the signature is not the one evmctl made"
# a hit: the headers without a request
n0=$(reqs "$A" "/buildid/${bid[good]}/executable")
fetch "$tmp/c-hdr" "$A" --headers --executable "${bid[good]}"
eq "requests on a hit" "$n0" "$(reqs "$A" "/buildid/${bid[good]}/executable")"
grep -q "^  X-DEBUGINFOD-FILE: $srv/good\$" "$tmp/out" || fail "--headers on a hit: $(cat "$tmp/out")"
# the other way: a file cached by the elfutils client with the hdr- file
# 0.193 writes beside it (0600, its mkstemp's), read without a request
# (0.192, the newest client here, writes none: it is made as 0.193 would)
find012=$(tl_peer debuginfod-find-0.192 2>/dev/null) || find012=
if [ -n "$find012" ]; then
	rm -rf "$tmp/c-eu"
	DEBUGINFOD_CACHE_PATH=$tmp/c-eu DEBUGINFOD_URLS=$A "$find012" executable "${bid[pem]}" \
		>/dev/null 2>&1 || fail "debuginfod-find-0.192 cannot fetch"
	[ ! -e "$tmp/c-eu/${bid[pem]}/hdr-executable" ] ||
		echo "note: debuginfod-find-0.192 writes hdr- files: compare with its own now"
	printf 'X-DEBUGINFOD-SIZE: 123\nX-DEBUGINFOD-ARCHIVE: /rpms/pem-1.0.rpm\nX-DEBUGINFOD-FILE: /usr/bin/pem\n\0' \
		>"$tmp/c-eu/${bid[pem]}/hdr-executable"
	chmod 0600 "$tmp/c-eu/${bid[pem]}/hdr-executable"
	n0=$(reqs "$A" "/buildid/${bid[pem]}/executable")
	fetch "$tmp/c-eu" "$A" --headers --executable "${bid[pem]}"
	eq "requests for elfutils' cached file" "$n0" "$(reqs "$A" "/buildid/${bid[pem]}/executable")"
	eq "headers of elfutils' hdr- file" \
		"  X-DEBUGINFOD-SIZE: 123|  X-DEBUGINFOD-ARCHIVE: /rpms/pem-1.0.rpm|  X-DEBUGINFOD-FILE: /usr/bin/pem" \
		"$(tail -n +2 "$tmp/out" | paste -sd'|')"
	# and a cache clean: the hdr- file is not an artifact in the counts
	DEBUGINFOD_CACHE_PATH=$tmp/c-eu "$DSOSTORE" cache stats >"$tmp/stats" 2>&1
	eq "cache stats: files (the hdr- file is none)" "files 1" "$(grep '^files ' "$tmp/stats")"
	eq "cache stats: bytes" "bytes $(stat -c %s "$srv/pem")" "$(grep '^bytes ' "$tmp/stats")"
fi
tl_case_end

tl_case g-serve-node
# dsostore serve with an ima:enforcing upstream: what it refuses it does
# not relay (404), a section it does not ask (503, debuginfod's answer
# for a section it cannot give: elfutils clients then take the whole file)
DEBUGINFOD_IMA_CERT_PATH=$tmp/certs tl_start_serve nport node 0 \
	--upstream "ima:enforcing $A" --cache "$tmp/node-cache" || exit 1
N=http://127.0.0.1:$nport
code() { curl -s --noproxy '*' --max-time 60 -o "$tmp/body" -w '%{http_code}' "$N/buildid/$1"; }
eq "node: good" 200 "$(code "${bid[good]}/executable")"
cmp -s "$tmp/body" "$srv/good" || fail "node: good is not the served file"
eq "node: nosig" 404 "$(code "${bid[nosig]}/executable")"
eq "node: corrupt" 404 "$(code "${bid[corrupt]}/executable")"
n0=$(reqs "$A" "/buildid/${bid[good]}/section")
eq "node: a section" 200 "$(code "${bid[good]}/section/.comment")"
cmp -s "$tmp/body" "$(dump "$srv/good" .comment)" || fail "node: .comment is not objcopy's"
eq "node: section requests upstream" "$n0" "$(reqs "$A" "/buildid/${bid[good]}/section")"
eq "node: a section of an unsigned file" 503 "$(code "${bid[nosig]}/section/.comment")"
[ ! -e "$tmp/node-cache/${bid[nosig]}/executable" ] || fail "node: nosig cached"
# the signature relayed (from the node's hdr- file, on its cache hit), so
# that a client of the node can enforce too
curl -s --noproxy '*' -D "$tmp/nhdrs" -o /dev/null "$N/buildid/${bid[good]}/executable"
eq "node: the signature relayed" "$(xxd -p "$srv/good.sig" | tr -d '\n')" \
	"$(grep -i '^X-DEBUGINFOD-IMASIGNATURE:' "$tmp/nhdrs" | tr -d '\r' | sed 's/^[^:]*: *//')"
fetch "$tmp/c-node" "ima:enforcing $N" --executable "${bid[good]}"
eq "good through the node, enforcing" 0 "$rc"
# A node over the same upstream, not enforcing: its first answer, a miss
# (the small file answered from memory before its commit), relays the
# signature too, from the download's own headers; then its cache has it.
tl_start_serve pport plain 0 --upstream "$A" --cache "$tmp/plain-cache" || exit 1
[ "$(stat -c %s "$srv/good")" -le 65536 ] || fail "the good program is over 64 KiB: not a small file"
curl -s --noproxy '*' -D "$tmp/phdrs" -o "$tmp/body" "http://127.0.0.1:$pport/buildid/${bid[good]}/executable"
cmp -s "$tmp/body" "$srv/good" || fail "plain node: good is not the served file"
eq "plain node: the signature relayed on a miss" "$(xxd -p "$srv/good.sig" | tr -d '\n')" \
	"$(grep -i '^X-DEBUGINFOD-IMASIGNATURE:' "$tmp/phdrs" | tr -d '\r' | sed 's/^[^:]*: *//')"
tl_cached "$srv/good" "$tmp/plain-cache/${bid[good]}/executable" || fail "plain node: good not cached"
tl_case_end

tl_finish debuginfod_ima "ok (${#cases[@]} signed variants, evmctl's verdicts)"
