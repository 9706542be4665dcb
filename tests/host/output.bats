#!/usr/bin/env bats
# Output hygiene shared by every subcommand: a write error on stdout is never
# silent (exit 1 and "cetctl: write error: ..." on stderr, the util-linux
# close_stdout way), whatever the subcommand and output mode.

load helpers

setup() {
	require_cetctl
}

# out_fails WHERE CMD...: run cetctl with stdout redirected to WHERE
# (/dev/full or "closed"), expect exit 1 and the write-error message.
out_fails() {
	local where=$1; shift
	if [ "$where" = closed ]; then
		run bash -c '"$0" "$@" >&-' "$CETCTL" "$@"
	else
		run bash -c '"$0" "$@" >'"$where" "$CETCTL" "$@"
	fi
	echo "exit $status: $output"
	[ "$status" -eq 1 ]
	[[ $output == *"cetctl: write error: "* ]]
}

@test "output: elf -J > /dev/full: exit 1, write error" {
	out_fails /dev/full elf -J /bin/ls
}

@test "output: elf -r -J on a tree > /dev/full: exit 1, write error" {
	out_fails /dev/full elf -r -J /usr/bin
}

@test "output: elf table with stdout closed: exit 1, write error" {
	out_fails closed elf /bin/ls
	[[ $output == *"Bad file descriptor"* ]]
}

@test "output: audit -J > /dev/full and closed: exit 1, write error" {
	out_fails /dev/full audit -J
	out_fails closed audit -J
}

@test "output: status > /dev/full and closed: exit 1, write error" {
	out_fails /dev/full status self
	out_fails closed status self
}

@test "output: info > /dev/full and closed: exit 1, not 0 or 2" {
	out_fails /dev/full info
	out_fails closed info -J
}

@test "output: --help and --list-columns > /dev/full: exit 1" {
	out_fails /dev/full --help
	out_fails /dev/full elf --help
	out_fails /dev/full audit --list-columns
}

@test "output: stdout closed but nothing to write: not a write error" {
	# coreutils' rule: EBADF at close only counts when output was pending
	mkdir -p "$BATS_TEST_TMPDIR/d"
	echo text >"$BATS_TEST_TMPDIR/d/notelf"
	run bash -c '"$0" elf -r -n "$1" >&-' "$CETCTL" "$BATS_TEST_TMPDIR/d"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *"write error"* ]]
}

@test "output: one error-prefix style, 'cetctl: CMD: ...', for every subcommand" {
	local line
	check() {	# check CMD ARGS...: the first stderr line of cetctl CMD ARGS
		run --separate-stderr "$CETCTL" "$@"
		# shellcheck disable=SC2154  # stderr: set by bats' run --separate-stderr
		line=${stderr%%$'\n'*}
		[[ $line == "cetctl: $1: "* ]] || { echo "$*: '$line'"; return 1; }
	}
	check elf -o NOPE /bin/true
	check elf /nonexistent
	check elf /dev/null
	check status -o NOPE self
	check status 999999999
	check audit -o NOPE
	check audit --pid abc
	check info -o NOPE
	check map --size abc
	# the summary of elf follows the same style
	run --separate-stderr "$CETCTL" elf /bin/true
	[[ $stderr == "cetctl: elf: 1 ELF file"* ]]
}

@test "output: a closed standard descriptor is never one of cetctl's own files" {
	# Seen in CI: with stdout closed, "audit -J" opened /proc on descriptor
	# 1, wrote its JSON into that and closed it as stdout at exit; when
	# nothing was left to flush the error had no reason ("write error").
	command -v strace >/dev/null || skip "strace not installed"
	# LeakSanitizer aborts under ptrace, and ASan's runtime opens /proc files
	# before main() on the closed numbers
	[[ $CETCTL_BUILD != *asan* ]] || skip "ASan cannot run under strace (LeakSanitizer aborts)"
	local where cmd opened
	for where in '<&-' '>&-' '2>&-' '<&- >&- 2>&-'; do
		for cmd in "audit -J" "status self" "elf -r /usr/lib/os-release /bin/true"; do
			# shellcheck disable=SC2086  # $cmd: a cetctl command line, split into its words
			strace -qq -e trace=execve,openat,open,pipe2,dup,dup2,dup3,socket -o "$TMP/trace" \
				bash -c 'exec "$0" "$@" >/dev/null 2>/dev/null '"$where" "$CETCTL" $cmd || true
			# from cetctl's exec on (before it: bash's redirections), but the
			# dynamic loader's opens (before main(), closed at once) and the
			# placeholder that holds a closed descriptor
			opened=$(awk '/^execve\("[^"]*cetctl"/ { on = 1; next } on' "$TMP/trace" |
				grep -Ev 'ld\.so\.cache|/lib/x86_64-linux-gnu/lib|"/", O_RDONLY\|O_CLOEXEC\|O_PATH\)|exited' |
				grep -E '(= |\[)[012][],]? ?' | grep -Ev '= -1' || true)
			[[ -z $opened ]] || { echo "$cmd $where: $opened"; return 1; }
		done
	done
	# and the error keeps its reason, whatever was left to flush
	out_fails closed audit -J
	[[ $output == *"write error: Bad file descriptor"* ]]
}
