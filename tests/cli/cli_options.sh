#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CLI's options are one table per command, from which the parser, each
# COMMAND --help, the man page and the bash completion are made.  For every
# command in `dsostore --help`:
#
#  - the options its --help lists and the ones its man page section lists
#    are the same set;
#  - each is taken by the parser, an option with an argument as "--opt X"
#    and "--opt=X" (and "-o X", "-oX"), followed by --help so that nothing
#    runs: the parser may refuse the value, never the option; an option
#    without one is refused with "=X";
#  - a made-up option is refused: exit 2, "unknown option" naming it
#    (addr2line: binutils' getopt, exit 1, "unrecognized option").
#
# Also: --version, -V and "version" print the same "dsostore X.Y.Z", the
# header's; the command list names every command once, its columns
# aligned; the completion offers the commands, a command's options (the
# same set as its --help) and files after an option that takes a FILE.
set -uo pipefail
. "$DS_SRC/tests/lib/testlib.bash"

: "${DSOSTORE:?DSOSTORE must name the CLI}" "${DS_BUILD:?}"
man=$DS_BUILD/man/dsostore.1
comp=$DS_BUILD/completion/dsostore
tl_tmpdir dscliopts
cd "$tmp" || exit 2

# The options of an option column ("-k, --vmlinux FILE", "-a --addresses",
# "--demangle[=STYLE]", "-b --target=<bfdname>"), one a line.
names() {
	tr ' ,' '\n\n' | grep -E '^--?[A-Za-z]' | sed -E 's/\[.*//; s/=.*//'
}

# The option column of the option lines of a --help: lines starting with
# two spaces and a dash, up to the two spaces before the help.
help_opts() {
	sed -n -E 's/^  (-[^ ].*)$/\1/p' | sed -E 's/  .*//' | names | sort -u
}

# CMD's section of the man page, roff escapes undone: the line after
# each .TP, and the option lines of a literal block.
man_opts() {
	awk -v cmd="$1" '
		/^\.S[SH] / { on = ($1 == ".SS" && $2 == cmd); next }
		!on { next }
		/^\.TP/ { tp = 1; next }
		tp { print; tp = 0; next }
		/^  \\-/ { print }' "$man" |
		sed -E 's/\\f[BIR]//g; s/\\-/-/g; s/\\e/\\/g' | sed -E 's/^  //; s/  .*//' | names |
		sort -u
}

# Words of an option's help row that take an argument: "--opt ARG",
# "-o ARG"; "opt" for an optional one ("--opt[=ARG]").
arg_opts() {
	sed -n -E 's/^  (-[^ ].*)$/\1/p' | sed -E 's/  .*//' |
		awk '{ for (i = 1; i <= NF; i++) {
			w = $i; sub(/,$/, "", w)
			if (w ~ /^--?[A-Za-z][A-Za-z0-9-]*\[=/) { sub(/\[.*/, "", w); print w, "optional" }
			else if (w ~ /^--?[A-Za-z][A-Za-z0-9-]*=/) { sub(/=.*/, "", w); print w, "required" }
			else if (w ~ /^--?[A-Za-z]/ && i < NF && $(i + 1) !~ /^-/) print w, "required"
		} }' | sort -u
}

# What the parser says to argv: "accepted", or its complaint.
refused='unknown option|unrecognized option|invalid option|needs an argument|requires an argument|takes no argument|allow an argument'
parse() {
	local out
	out=$("$DSOSTORE" "$@" --help 2>&1 >/dev/null)
	if [[ $out =~ $refused ]]; then
		echo "${BASH_REMATCH[0]}"
	else
		echo accepted
	fi
}

cmds=$("$DSOSTORE" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')

tl_case "version"
v1=$("$DSOSTORE" --version) v2=$("$DSOSTORE" -V) v3=$("$DSOSTORE" version)
want=$(awk '/define DS_VERSION_MAJOR/ { a = $3 } /define DS_VERSION_MINOR/ { b = $3 }
	/define DS_VERSION_PATCH/ { c = $3 } END { print "dsostore " a "." b "." c }' \
	"$DS_SRC/include/dsostore.h")
[ "$v1" = "$want" ] && [ "$v2" = "$want" ] && [ "$v3" = "$want" ] ||
	fail "--version '$v1', -V '$v2', version '$v3'; the header says '$want'"
tl_case_end

tl_case "command list"
n=$(wc -w <<<"$cmds")
[ "$n" -ge 16 ] && [ "$(sort -u <<<"$cmds" | wc -l)" = "$n" ] || fail "commands: $cmds"
cols=$("$DSOSTORE" help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ {
	match($0, /^  [^ ]+ +/); print RLENGTH }' | sort -u)
[ "$(wc -l <<<"$cols")" = 1 ] || fail "the summaries start at columns $(echo $cols)"
for c in buildid-list perf-cache stack addr2line; do
	grep -qx "$c" <<<"$cmds" || fail "$c is not in the command list"
done
tl_case_end

for cmd in $cmds; do
	tl_case "$cmd"
	"$DSOSTORE" "$cmd" --help >help.txt 2>&1 || fail "$cmd --help: exit $?"
	help_opts <help.txt >help.opts
	man_opts "$cmd" >man.opts
	[ -s help.opts ] || fail "$cmd --help lists no option"
	grep -qx -- --help help.opts || fail "$cmd --help does not list --help"
	cmp -s help.opts man.opts ||
		fail "$cmd: --help and the man page differ: $(diff help.opts man.opts | grep '^[<>]' | tr '\n' ' ')"
	# Every option, in each form it has.
	declare -A kinds=()
	while read -r opt kind; do
		kinds[$opt]=$kind
	done < <(arg_opts <help.txt)
	flag_checked=
	while read -r opt; do
		kind=${kinds[$opt]:-}
		forms=()
		case $opt:$kind in
		--*:required) forms=("$opt 1" "$opt=1") ;;
		--*:optional) forms=("$opt" "$opt=1") ;;
		--*:) forms=("$opt") ;;
		-?:required) forms=("$opt 1" "${opt}1") ;;
		*) forms=("$opt") ;;
		esac
		for form in "${forms[@]}"; do
			# shellcheck disable=SC2086 # the form is words
			got=$(parse "$cmd" $form)
			[ "$got" = accepted ] || fail "$cmd $form: $got"
		done
		# One flag of each command is enough to see "=X" refused.
		if [ -z "$kind$flag_checked" ] && [ "${opt#--}" != "$opt" ] && [ "$cmd" != addr2line ]; then
			flag_checked=1
			got=$(parse "$cmd" "$opt=1")
			[ "$got" = "takes no argument" ] || fail "$cmd $opt=1: $got"
		fi
	done <help.opts
	unset kinds
	"$DSOSTORE" "$cmd" --no-such-option-at-all >out.txt 2>err.txt
	rc=$?
	if [ "$cmd" = addr2line ]; then
		[ $rc = 1 ] && grep -q "unrecognized option '--no-such-option-at-all'" err.txt ||
			fail "$cmd --no-such-option-at-all: exit $rc, $(head -2 err.txt)"
	else
		[ $rc = 2 ] && grep -q "unknown option '--no-such-option-at-all'" err.txt ||
			fail "$cmd --no-such-option-at-all: exit $rc, $(head -2 err.txt)"
	fi
	tl_case_end
done

tl_case "bash completion"
if command -v bash >/dev/null && bash -n "$comp"; then
	# shellcheck disable=SC1090
	. "$comp"
	complete -p dsostore >/dev/null 2>&1 || fail "no completion registered for dsostore"
	COMP_WORDS=(dsostore "") COMP_CWORD=1
	_dsostore
	printf '%s\n' "${COMPREPLY[@]}" | sort >comp.cmds
	for c in $cmds; do
		grep -qx -- "$c" comp.cmds || fail "command $c is not completed"
	done
	for cmd in report symbolize stack buildid-list; do
		COMP_WORDS=(dsostore "$cmd" -) COMP_CWORD=2
		_dsostore
		printf '%s\n' "${COMPREPLY[@]}" | sort -u >comp.opts
		"$DSOSTORE" "$cmd" --help | help_opts >help.opts
		cmp -s comp.opts help.opts ||
			fail "$cmd: completion and --help differ: $(diff comp.opts help.opts | grep '^[<>]' | tr '\n' ' ')"
	done
	: >zz-recording.data
	COMP_WORDS=(dsostore report --pprof zz) COMP_CWORD=3
	_dsostore
	[ "${COMPREPLY[*]}" = zz-recording.data ] || fail "report --pprof zz: '${COMPREPLY[*]}'"
else
	fail "$comp is not a bash script"
fi
tl_case_end

tl_case "man page"
grep -q '^\.TH DSOSTORE 1 ' "$man" || fail "$man has no .TH"
for cmd in $cmds; do
	grep -qx "\.SS $cmd" "$man" || fail "the man page has no section for $cmd"
done
if command -v groff >/dev/null; then
	warn=$(groff -man -Tutf8 -ww -z "$man" 2>&1)
	[ -z "$warn" ] || fail "groff: $(head -3 <<<"$warn")"
fi
tl_case_end

tl_finish cli_options
