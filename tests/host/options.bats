#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Options stay consistent: every long option a command's --help lists is in
# its man page (man/cetctl-<cmd>.1, else man/cetctl.1) and in the bash, zsh
# and fish completions, and every option a completion offers is in --help.
# --help/--version exit 0 on stdout; unknown options exit 1 with a hint
# (run: 125, as env and timeout).
# Subcommands that are not written yet are skipped, with the reason.

load helpers

setup() {
	require_cetctl
	TMP=$(mktemp -d "${BATS_TMPDIR:-/tmp}/cetctl-opts.XXXXXX")
}

teardown() {
	[ -n "${TMP:-}" ] && rm -rf "$TMP"
}

# Long options at the start of an option line of `cetctl [CMD] --help`.
opts_help() {
	"$CETCTL" "$@" --help 2>/dev/null |
		sed -nE 's/^[[:space:]]+(-[A-Za-z0-9], )?--([a-z0-9][a-z0-9-]*).*/--\2/p' | sort -u
}

# Long options mentioned in a man page (roff escapes undone).
opts_man() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' "$1" |
		grep -oE -- '(^|[^a-z0-9-])--[a-z0-9][a-z0-9-]*' | sed -E 's/^[^-]*//' | sort -u
}

# Long options of the OPTIONS section of a man page.
opts_man_section() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$1" |
		awk '/^\.SH/ { on = ($2 == "OPTIONS") ; next } on' |
		grep -oE -- '(^|[^a-z0-9-])--[a-z0-9][a-z0-9-]*' | sed -E 's/^[^-]*//' | sort -u
}

# Options the bash completion offers: "" for the global list, else CMD.
opts_bash() {
	local f=$COMPDIR/cetctl.bash
	if [ -z "$1" ]; then
		sed -nE 's/^[[:space:]]*local global_opts="([^"]*)".*/\1/p' "$f"
	else
		sed -nE "s/^[[:space:]]*$1\\)[[:space:]]+opts=\"([^\"]*)\".*/\\1/p" "$f"
	fi | tr ' ' '\n' | grep -E '^--' | sort -u
}

opts_zsh() {
	local f=$COMPDIR/_cetctl fn=_cetctl${1:+_$1}
	awk -v fn="$fn" '$0 ~ "^" fn "\\(\\) \\{" { on = 1; next } on && /^}/ { on = 0 } on' "$f" |
		grep -oE -- '(^|[^a-z0-9-])--[a-z0-9][a-z0-9-]*' | sed -E 's/^[^-]*//' | sort -u
}

opts_fish() {
	local f=$COMPDIR/cetctl.fish
	if [ -z "$1" ]; then
		grep -E -- '-n "not __fish_seen_subcommand_from' "$f"
	else
		grep -E -- "-n \"__fish_seen_subcommand_from $1\"" "$f"
	fi | grep -oE -- ' -l [a-z0-9][a-z0-9-]*' | sed -E 's/^ -l /--/' | sort -u
}

# check_options [CMD]: print every inconsistency, return 1 if any.
check_options() {
	local cmd=${1:-} man bad=0 o
	man=$MANDIR/cetctl.1
	[ -n "$cmd" ] && [ -f "$MANDIR/cetctl-$cmd.1" ] && man=$MANDIR/cetctl-$cmd.1
	opts_help $cmd >"$TMP/help"
	[ -s "$TMP/help" ] || { echo "${cmd:-cetctl}: --help lists no long option"; return 1; }
	opts_man "$man" >"$TMP/man"
	opts_bash "$cmd" >"$TMP/bash"
	opts_zsh "$cmd" >"$TMP/zsh"
	opts_fish "$cmd" >"$TMP/fish"
	for w in man bash zsh fish; do
		for o in $(comm -23 "$TMP/help" "$TMP/$w"); do
			echo "${cmd:-cetctl}: $o is in --help but not in $w"
			bad=1
		done
	done
	for w in bash zsh fish; do
		for o in $(comm -13 "$TMP/help" "$TMP/$w"); do
			echo "${cmd:-cetctl}: $o is in the $w completion but not in --help"
			bad=1
		done
	done
	# a per-command page documents exactly that command's options (plus
	# the global ones, which may be repeated there)
	if [ -n "$cmd" ] && [ "$man" != "$MANDIR/cetctl.1" ]; then
		opts_man_section "$man" | comm -23 - <(sort -u "$TMP/help" <(opts_help)) >"$TMP/extra"
		for o in $(cat "$TMP/extra"); do
			echo "$cmd: $o is in the OPTIONS of $(basename "$man") but not in --help"
			bad=1
		done
	fi
	return $bad
}

# Skip a subcommand that says it is not written yet.
require_cmd() {
	local out
	out=$("$CETCTL" "$1" --help 2>&1) || true
	if grep -q 'not implemented yet' <<<"$out"; then
		skip "cetctl $1 is not implemented yet"
	fi
}

check_cmd() {
	local cmd=$1
	require_cmd "$cmd"
	MANDIR=$REPO/man COMPDIR=$REPO/completions
	run --separate-stderr "$CETCTL" "$cmd" --help
	[ "$status" -eq 0 ] || { echo "$cmd --help: exit $status"; return 1; }
	[ -n "$output" ] && [ -z "$stderr" ] || { echo "$cmd --help: not on stdout only"; return 1; }
	run --separate-stderr "$CETCTL" "$cmd" --no-such-option-xyz
	# run is a launcher: its own errors are 125 (env/timeout conventions)
	local want=1
	[ "$cmd" != run ] || want=125
	[ "$status" -eq "$want" ] || { echo "$cmd: unknown option: exit $status"; return 1; }
	[[ $stderr == *"Try 'cetctl"* ]] || { echo "$cmd: unknown option: stderr '$stderr'"; return 1; }
	[ -z "$output" ] || { echo "$cmd: unknown option printed to stdout"; return 1; }
	check_options "$cmd"
}

@test "options: the commands of cetctl --help are the ones checked here" {
	run "$CETCTL" --help
	[ "$status" -eq 0 ]
	local listed
	listed=$(awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }' <<<"$output" | sort | xargs)
	[ "$listed" = "audit elf info map run status" ] || { echo "commands: $listed"; return 1; }
	# and the completions offer exactly them
	grep -q 'local cmds="elf status audit info run map"' "$REPO/completions/cetctl.bash"
	grep -q "1:command:(elf status audit info run map)" "$REPO/completions/_cetctl"
	grep -q "set -l cmds elf status audit info run map" "$REPO/completions/cetctl.fish"
}

@test "options: cetctl --help, --version exit 0 on stdout; unknown options exit 1" {
	run --separate-stderr "$CETCTL" --help
	[ "$status" -eq 0 ] && [ -n "$output" ] && [ -z "$stderr" ]
	run --separate-stderr "$CETCTL" --version
	[ "$status" -eq 0 ] && [ -z "$stderr" ]
	[[ $output =~ ^cetctl\ [0-9]+\.[0-9]+ ]]
	run --separate-stderr "$CETCTL" --no-such-option-xyz
	[ "$status" -eq 1 ]
	[[ $stderr == *"Try 'cetctl --help'"* ]]
	run --separate-stderr "$CETCTL" no-such-command
	[ "$status" -eq 1 ]
	[[ $stderr == *"Try 'cetctl --help'"* ]]
}

@test "options: global options in man page and completions" {
	MANDIR=$REPO/man COMPDIR=$REPO/completions
	check_options ""
}

@test "options: elf"    { check_cmd elf; }
@test "options: status" { check_cmd status; }
@test "options: audit"  { check_cmd audit; }
@test "options: info"   { check_cmd info; }
@test "options: run"    { check_cmd run; }
@test "options: map"    { check_cmd map; }

@test "options: the check fails when an option is missing somewhere" {
	local cmd=elf w
	require_cmd "$cmd"
	for w in man bash zsh fish; do
		rm -rf "$TMP/m" "$TMP/c"
		cp -r "$REPO/man" "$TMP/m"
		cp -r "$REPO/completions" "$TMP/c"
		case $w in
		man)  sed -i -e 's/\\-\\-deps/\\-\\-gone/g' -e 's/--deps/--gone/g' "$TMP"/m/cetctl*.1 ;;
		bash) sed -i 's/ --deps / /' "$TMP/c/cetctl.bash" ;;
		zsh)  sed -i "/'--deps\[/d" "$TMP/c/_cetctl" ;;
		fish) sed -i '/subcommand_from elf" -l deps/d' "$TMP/c/cetctl.fish" ;;
		esac
		MANDIR=$TMP/m COMPDIR=$TMP/c
		run check_options "$cmd"
		[ "$status" -eq 1 ] || { echo "removing --deps from $w went unnoticed"; return 1; }
		[[ $output == *"--deps is in --help but not in $w"* ]] || { echo "$output"; return 1; }
	done
	# and an option only a completion knows is caught too
	rm -rf "$TMP/c"; cp -r "$REPO/completions" "$TMP/c"
	sed -i 's/elf)    opts="/elf)    opts="--bogus-opt /' "$TMP/c/cetctl.bash"
	MANDIR=$REPO/man COMPDIR=$TMP/c
	run check_options "$cmd"
	[ "$status" -eq 1 ]
	[[ $output == *"--bogus-opt is in the bash completion but not in --help"* ]]
}

@test "options: -V/--version on every subcommand, exit 0 on stdout, listed in --help" {
	local cmd want
	want=$("$CETCTL" --version)
	[[ $want == "cetctl "* ]]
	for cmd in elf status audit info run map; do
		for o in -V --version; do
			run --separate-stderr "$CETCTL" "$cmd" "$o"
			[ "$status" -eq 0 ] || { echo "$cmd $o: exit $status: $stderr"; return 1; }
			[ "$output" = "$want" ] || { echo "$cmd $o: '$output'"; return 1; }
		done
		"$CETCTL" "$cmd" --help | grep -qE -- '-V, --version' || { echo "$cmd --help lacks -V, --version"; return 1; }
	done
}

@test "options: bash completion of -o/--output offers column names, not files" {
	# a minimal stand-in for bash-completion's helpers: enough for _cetctl
	run bash -c '
		_init_completion() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]};
			words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
		_filedir() { COMPREPLY=(FILES); }
		complete() { :; }
		cetctl() { "$CETCTL" "$@"; }
		source "$1"
		for c in elf status audit info; do
			COMP_WORDS=(cetctl "$c" -o ""); COMP_CWORD=3; COMPREPLY=()
			_cetctl
			echo "$c: ${COMPREPLY[*]}"
			COMP_WORDS=(cetctl "$c" --output V); COMP_CWORD=3; COMPREPLY=()
			_cetctl
			echo "$c V: ${COMPREPLY[*]}"
		done' _ "$REPO/completions/cetctl.bash"
	echo "$output"
	[[ $output == *"elf: FILE ARCH TYPE"*KERNEL* ]]
	[[ $output == *"audit V: VERDICT"* ]]
	[[ $output == *"info: NAME VALUE DETAIL"* ]]
	[[ $output != *FILES* ]]
}

# bash_complete WORD...: run _cetctl on the words (the last one is being
# completed) with a stand-in for bash-completion's helpers; prints COMPREPLY
# one per line, or "OFFSET n" when it handed over to _command_offset n.
bash_complete() {
	bash -c '
		_init_completion() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]};
			words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
		_filedir() { COMPREPLY=(FILES); }
		_command_offset() { COMPREPLY=("OFFSET $1"); }
		complete() { :; }
		cetctl() { "$CETCTL" "$@"; }
		source "$1"; shift
		COMP_WORDS=(cetctl "$@"); COMP_CWORD=$#; COMPREPLY=()
		_cetctl
		printf "%s\n" "${COMPREPLY[@]}"' _ "$REPO/completions/cetctl.bash" "$@"
}

@test "options: bash completion completes option values (--user, --require, -o lists)" {
	run bash_complete audit --user ro
	[[ $output == *root* ]] || { echo "--user: $output"; false; }
	run bash_complete audit --require shstk,l
	[ "$output" = shstk,locked ] || { echo "--require: $output"; false; }
	run bash_complete audit --require ""
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "locked shstk wrss " ] || { echo "--require: $output"; false; }
	run bash_complete audit -o PID,CO
	[ "$output" = PID,COMM ] || { echo "-o: $output"; false; }
	run bash_complete status --output +SS-V
	[ "$output" = +SS-VMAS ] || { echo "-o +: $output"; false; }
	run bash_complete audit --comm bas
	[[ $output == *bash* ]] || { echo "--comm: $output"; false; }
	run bash_complete audit --prometheus ""
	[ "$output" = FILES ]
	# --unit: the units systemctl lists (a stand-in systemctl here)
	mkdir -p "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\necho "ssh.service loaded active running OpenSSH"\necho "nginx.service loaded active running nginx"\n' \
		>"$BATS_TEST_TMPDIR/bin/systemctl"
	chmod +x "$BATS_TEST_TMPDIR/bin/systemctl"
	PATH=$BATS_TEST_TMPDIR/bin:$PATH run bash_complete audit --unit ssh.service,n
	[ "$output" = ssh.service,nginx.service ] || { echo "--unit: $output"; false; }
}

@test "options: bash completion hands over to PROG's own completion after run [OPTIONS] [--]" {
	local want args
	while IFS='|' read -r want args; do
		# shellcheck disable=SC2086  # $args: the words typed before the cursor
		run bash_complete $args ""
		[ "$output" = "OFFSET $want" ] || { echo "cetctl $args '': '$output', want OFFSET $want"; false; }
	done <<-'EOF'
	2|run
	4|run --shstk --
	2|run ls
	2|run ls -l
	5|run -m ptrace --
	3|run --shstk ls
	3|run -- ls -l
	EOF
	run bash_complete run --shstk -- ls -l
	[ "$output" = "OFFSET 4" ]
	run bash_complete run --sh
	[ "$output" = --shstk ]
	run bash_complete run -m ""
	[ "$(sort <<<"$output" | tr '\n' ' ')" = "auto glibc ptrace " ]
}

# fish_complete LINE: fish's completions for LINE (candidates only)
fish_complete() {
	fish -c 'function cetctl; $CETCTL $argv; end; source $argv[1]; complete -C $argv[2]' \
		"$REPO/completions/cetctl.fish" "$1" | cut -f1
}

@test "options: fish completes option values and hands over to PROG after run" {
	command -v fish >/dev/null || skip "fish not installed (its completion is checked only by the option lists)"
	run fish_complete 'cetctl audit --require shstk,l'
	[ "$output" = shstk,locked ]
	run fish_complete 'cetctl audit -o PID,CO'
	[ "$output" = PID,COMM ]
	run fish_complete 'cetctl status -o +SS-V'
	[ "$output" = +SS-VMAS ]
	run fish_complete 'cetctl audit --user ro'
	[[ $output == *root* ]]
	# after run [OPTIONS] [--] PROG: cetctl's own completion of PROG's options
	run fish_complete 'cetctl run --shstk -- cetctl audit --requ'
	[ "$output" = --require ]
	run fish_complete 'cetctl run -m ptrace cetctl --vers'
	[ "$output" = --version ]
	run fish_complete 'cetctl run --sh'
	[ "$output" = --shstk ]
}

# zcomplete 'WORDS ': the matches a real zsh offers after WORDS, one per line,
# with completions/_cetctl and the cetctl under test (tests/host/tools/zsh-complete.zsh)
zcomplete() {
	timeout 60 zsh -f "$HOST_TESTS/tools/zsh-complete.zsh" "$REPO/completions" \
		"$(dirname "$CETCTL")" "$1"
}

@test "options: zsh completes subcommands, option values and -o lists, and hands over after run" {
	command -v zsh >/dev/null || skip "zsh not installed"
	zsh -n "$REPO/completions/_cetctl"
	# each line: the command line, then the matches that must be among those offered
	local line want m got
	while IFS='|' read -r line want; do
		got=$(zcomplete "$line") || { echo "no answer for '$line'"; return 1; }
		for m in $want; do
			grep -qx -- "$m" <<<"$got" ||
				{ echo "'$line': no '$m' among:"; echo "$got"; return 1; }
		done
	done <<'EOF'
cetctl |audit elf info map run status
cetctl audit --require |locked shstk wrss
cetctl audit -o PID,CO|COMM
cetctl status -o |PID TID VERDICT
cetctl info --output |NAME VALUE DETAIL
cetctl elf --kernel-policy |allow block none
cetctl run -m |auto glibc ptrace
cetctl run --sh|--shstk
cetctl run -- ls --colo|--color
cetctl run -s -- ls --colo|--color
cetctl run -m ptrace ls --colo|--color
cetctl run -- cetctl au|audit
EOF
	# nothing from run's own options once PROG is there
	got=$(zcomplete "cetctl run -s ls --sh")
	! grep -qx -- --shstk <<<"$got" || { echo "$got"; return 1; }
}

@test "options: getopt's own messages carry the cetctl: CMD: prefix" {
	local cmd
	run --separate-stderr "$CETCTL" --no-such-option-xyz
	[[ $stderr == "cetctl: unrecognized option '--no-such-option-xyz'"* ]] || { echo "$stderr"; false; }
	for cmd in elf status audit info run map; do
		run --separate-stderr "$CETCTL" "$cmd" --no-such-option-xyz
		[[ $stderr == "cetctl: $cmd: unrecognized option '--no-such-option-xyz'"* ]] || { echo "$stderr"; false; }
	done
	run --separate-stderr "$CETCTL" audit --user
	[[ $stderr == "cetctl: audit: option '--user' requires an argument"* ]] || { echo "$stderr"; false; }
	run --separate-stderr "$CETCTL" elf -Q /bin/true
	[[ $stderr == "cetctl: elf: invalid option -- 'Q'"* ]] || { echo "$stderr"; false; }
}
