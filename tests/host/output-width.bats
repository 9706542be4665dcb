#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Table width as util-linux does it (issue 13): on a terminal the table fits
# its width (COLUMNS, when set, says what the width is), long text columns
# are truncated and a long FILE takes a line of its own; output that is not a terminal is never
# cut or padded to a width, whatever the terminal or COLUMNS say.

load helpers

setup_file() {
	build_fixtures
}

setup() {
	require_cetctl
	command -v script >/dev/null || skip "script (bsdutils) not installed"
	EMU=$HOST_TESTS/fixtures/proc/cet-emulated
	F=$FIXTURES
	TMP=$(mktemp -d "${BATS_TMPDIR:-/tmp}/cetctl-width.XXXXXX")
	# shellcheck disable=SC2034  # bg: read by cleanup_test in teardown
	bg=()
}

teardown() {
	cleanup_test
}

# on_tty COLS CMD...: run CMD with its stdout on a pseudo-terminal COLS wide
# (stderr dropped); the output, without the terminal's carriage returns
on_tty() {
	local cols=$1; shift
	printf '%q ' "$@" >"$TMP/cmd"
	script -qec "stty cols $cols rows 50; $(cat "$TMP/cmd") 2>/dev/null" /dev/null </dev/null |
		tr -d '\r'
}

# widest FILE: the length of the longest line
widest() {
	LC_ALL=C.UTF-8 awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$1"
}

# fits W OUT ARGS...: OUT, the output of cetctl ARGS on a terminal W wide,
# fits it. A line may be longer only where a verdict or detail needs more
# than the other columns leave: then it is either cut to its head (with an
# ellipsis: see the test of the cuts) or whole, as in a pipe's line, being
# all head ("enabled and locked").
fits() {
	local w=$1 out=$2
	shift 2
	"$CETCTL" "$@" >"$TMP/pipe" 2>/dev/null || true
	LC_ALL=C.UTF-8 awk -v w="$w" 'NR == FNR { pipe[FNR] = $0; next }
		length($0) > w && !/(…|\.\.\.)$/ && $0 != pipe[FNR]' "$TMP/pipe" "$out" >"$TMP/over"
	# and a file name longer than the terminal, on a line of its own (elf)
	local line
	while IFS= read -r line; do
		[[ -e ${line## } && ${line## } == /* ]] || { echo "too long: $line"; return 1; }
	done <"$TMP/over"
}

# every table command, default columns
commands() {
	echo "elf $F/hello-marked $F/made/note-align4 $F/made/note-unordered $F/start32-marked"
	echo "elf --deps $F/deps/app-marked $F/deps/libtop-weak.so"
	echo "info"
	echo "--proc-root $EMU status 3114 3115 4001 4002"
	echo "--proc-root $EMU audit"
	echo "--proc-root $EMU info"
}

@test "width: tables fit an 80-column terminal (info: 50)" {
	local args w
	while read -r args; do
		# the default columns' headers and short values take about 70-80
		# (libsmartcols 2.38 does not cut a header); info's about 30
		w=80
		[[ $args == info ]] && w=50
		[[ $args == "elf --deps"* ]] && w=90
		# shellcheck disable=SC2086  # $args: a cetctl command line, split into its words
		on_tty $w "$CETCTL" $args >"$TMP/out"
		[ -s "$TMP/out" ] || { echo "no output: $args"; return 1; }
		# shellcheck disable=SC2086  # a command line, split into its words on purpose
		fits $w "$TMP/out" $args || { echo "cetctl $args:"; cat "$TMP/out"; return 1; }
	done < <(commands)
}

# check_cuts PIPE TTY: every verdict (the second field on) of TTY is the
# PIPE's whole, or its words up to a word boundary followed by an ellipsis,
# and never less than its head (up to the first ':', ';' or " (")
check_cuts() {
	local pid v whole head cut n=0
	declare -A full=()
	# (a thread's row in status has neither)
	while read -r pid v; do [[ -z $pid ]] || full[$pid]=$v; done <"$1"
	while read -r pid v; do
		[[ -n $pid ]] || continue
		whole=${full[$pid]-}
		[[ -n $whole ]] || { echo "row $pid: not in the pipe's output"; return 1; }
		[[ $v == "$whole" ]] && continue
		n=$((n + 1))
		# the ellipsis: … in a UTF-8 locale, ... in others
		[[ $v == *… || $v == *... ]] ||
			{ echo "row $pid: '$v' is cut without an ellipsis ('$whole')"; return 1; }
		cut=${v%…}
		cut=${cut%...}
		[[ $whole == "$cut"* ]] || { echo "row $pid: '$v' is not a prefix of '$whole'"; return 1; }
		[[ ${whole:${#cut}:1} =~ [\ :\;,] ]] ||
			{ echo "row $pid: '$v' cuts a word of '$whole'"; return 1; }
		# the head: up to the first ':', ';' or '('; without one, the first word
		head=${whole%%[:;(]*}
		[[ $head != "$whole" ]] || head=${whole%% *}
		head=${head% }
		((${#cut} >= ${#head})) || { echo "row $pid: '$v' cuts the head '$head' of '$whole'"; return 1; }
	done <"$2"
	echo "$n"
}

@test "width: a verdict is cut at a word with an ellipsis, never inside its head (issue 21)" {
	local cols cmd n total=0
	for cmd in audit "status 3114 3115 3116 4001 4002"; do
		# shellcheck disable=SC2086  # a command line, split into its words on purpose
		"$CETCTL" --proc-root "$EMU" $cmd -o PID,VERDICT 2>/dev/null | sed 1d >"$TMP/pipe"
		[ -s "$TMP/pipe" ]
		for cols in 12 20 30 45 80; do
			# shellcheck disable=SC2086  # a command line, split into its words on purpose
			on_tty $cols "$CETCTL" --proc-root "$EMU" $cmd -o PID,VERDICT | sed 1d >"$TMP/tty"
			n=$(check_cuts "$TMP/pipe" "$TMP/tty") || { echo "$n"; echo "$cmd at $cols:"; cat "$TMP/tty"; return 1; }
			total=$((total + n))
		done
	done
	# the default columns on an 80-column terminal: the fixture's verdicts
	# keep their heads ("not enabled", not "not ena")
	on_tty 80 "$CETCTL" --proc-root "$EMU" audit -o PID,USER,COMM,SHSTK,WRSS,LOCKED,THREADS,DIFFER,MARKING,VERDICT |
		sed 1d | awk '{ $2 = $3 = $4 = $5 = $6 = ""; print }' >"$TMP/tty80"
	grep -q 'not enabled' "$TMP/tty80" || { cat "$TMP/tty80"; return 1; }
	# some verdicts were cut, or the test proved nothing
	((total > 5)) || { echo "only $total verdicts were cut"; return 1; }
	# elf's LOADER too: "ibt,shstk" whole, never "ibt,sh"
	on_tty 60 "$CETCTL" elf "$F/hello-marked" "$F/made/note-align4" >"$TMP/elf60"
	grep -q ' ibt,shstk ' "$TMP/elf60" || { cat "$TMP/elf60"; return 1; }
	grep -Eq ' ignored(…|\.\.\.| )' "$TMP/elf60" || { cat "$TMP/elf60"; return 1; }
}

@test "width: COLUMNS sets the width of a terminal" {
	local args
	while read -r args; do
		# shellcheck disable=SC2086  # $args: a cetctl command line, split into its words
		on_tty 200 env COLUMNS=82 "$CETCTL" $args >"$TMP/out"
		# shellcheck disable=SC2086  # a command line, split into its words on purpose
		fits 82 "$TMP/out" $args || { echo "cetctl $args:"; cat "$TMP/out"; return 1; }
	done < <(commands)
}

@test "width: a wide terminal shows everything, as a pipe does" {
	"$CETCTL" --proc-root "$EMU" audit >"$TMP/pipe" 2>/dev/null
	on_tty 250 "$CETCTL" --proc-root "$EMU" audit >"$TMP/tty"
	diff "$TMP/pipe" "$TMP/tty"
	# every table command; a terminal may pad its last column, nothing more.
	# (libsmartcols widens the last column to the terminal's width: a sentence
	# column was once cut to its head, "no…", by that slack, on any width)
	local args
	while read -r args; do
		# shellcheck disable=SC2086  # $args: a cetctl command line, split into its words
		"$CETCTL" $args 2>/dev/null | sed 's/ *$//' >"$TMP/pipe" || true
		# shellcheck disable=SC2086  # $args: a cetctl command line, split into its words
		on_tty 250 "$CETCTL" $args | sed 's/ *$//' >"$TMP/tty"
		diff "$TMP/pipe" "$TMP/tty" || { echo "cetctl $args differs on a 250-column terminal"; return 1; }
	done < <(commands)
}

@test "width: output that is not a terminal is neither cut nor padded, whatever the width" {
	local args
	while read -r args; do
		# shellcheck disable=SC2086  # $args: a cetctl command line, split into its words
		COLUMNS=300 "$CETCTL" $args >"$TMP/a" 2>/dev/null || true
		# shellcheck disable=SC2086  # $args: a cetctl command line, split into its words
		COLUMNS=30 "$CETCTL" $args >"$TMP/b" 2>/dev/null || true
		diff "$TMP/a" "$TMP/b" || { echo "cetctl $args depends on COLUMNS"; return 1; }
		# the same on a narrow terminal's pipe
		printf '%q ' "$CETCTL" $args >"$TMP/cmd"
		script -qec "stty cols 40; $(cat "$TMP/cmd") 2>/dev/null | cat" /dev/null </dev/null |
			tr -d '\r' >"$TMP/c"
		diff "$TMP/a" "$TMP/c" || { echo "cetctl $args | cat depends on the terminal"; return 1; }
		# nothing is truncated: the longest verdict or detail is there whole
		[ "$(grep -c '…' "$TMP/a")" -eq 0 ]
	done < <(commands)
	# no line is longer than its widest cells need: at most the header's
	# width plus the longest cell of the last column
	"$CETCTL" --proc-root "$EMU" audit -o PID,COMM >"$TMP/narrow" 2>/dev/null
	[ "$(widest "$TMP/narrow")" -le 25 ]
}
