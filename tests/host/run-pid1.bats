#!/usr/bin/env bats
# cetctl run as a container's entrypoint (PID 1 of a pid namespace) or as
# a child subreaper, and with an execute-only program (issue 20).

load helpers

setup() {
	require_cetctl
	TMP=$BATS_TEST_TMPDIR
	ulimit -S -c 0
	unset CETCTL_PRELOAD CETCTL_FAULT CETCTL_FAULT_LOG
	# forks a worker that exits 3, waits for it, exits with its status; a
	# wait() that reaps anything else says so and exits 9
	cat > "$TMP/fw.c" <<'C'
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
	pid_t w = fork(), r;
	int st;

	if (w == 0) {
		usleep(100000);
		_exit(3);
	}
	r = wait(&st);
	if (r != w) {
		fprintf(stderr, "wait() reaped %d, not the worker %d\n", (int)r, (int)w);
		return 9;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 10;
}
C
	gcc -O2 -o "$TMP/fw" "$TMP/fw.c"
}

teardown() {
	cleanup_test
}

need_pidns() {
	unshare -pf --mount-proc true 2>/dev/null || skip "cannot make a pid namespace here"
}

@test "run as PID 1 of a pid namespace: the program's wait() reaps its own worker (3)" {
	need_pidns
	run -3 unshare -pf --mount-proc "$CETCTL" run --trace-only "$TMP/fw"
	run -3 unshare -pf --mount-proc "$TMP/fw"	# as a plain exec
}

@test "run as a child subreaper: the program's wait() reaps its own worker (3)" {
	run -3 perl -e 'require "syscall.ph"; syscall(&SYS_prctl, 36, 1, 0, 0, 0) == 0 or die;
		exec { $ARGV[0] } @ARGV' -- "$CETCTL" run --trace-only "$TMP/fw"
}

@test "run as PID 1: signals are forwarded, the status is the program's" {
	need_pidns
	run -143 unshare -pf --mount-proc "$CETCTL" run --trace-only sh -c 'kill -TERM $$'
	unshare -pf --mount-proc "$CETCTL" run --trace-only \
		sh -c 'trap "exit 5" TERM; echo $$ > "$0"; while :; do sleep 0.05; done' "$TMP/pid" &
	bg=($!)
	for _ in $(seq 100); do [ -s "$TMP/pid" ] && break; sleep 0.05; done
	[ -s "$TMP/pid" ]
	sleep 0.2
	kill -TERM "$(pgrep -P "${bg[0]}")"	# cetctl: PID 1 inside
	rc=0; wait "${bg[0]}" || rc=$?
	[ "$rc" -eq 5 ]
}

@test "run: an execute-only program is refused with 125 before it runs, never killed or hung" {
	[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null || skip "needs root and setpriv to be nobody"
	XO=$(mktemp -d /tmp/cetctl-xo.XXXXXX)	# a path nobody can reach
	chmod 0755 "$XO"
	cp "$TMP/fw" "$XO/prog"
	chmod 0711 "$XO/prog"
	run --separate-stderr timeout -s KILL 30 setpriv --reuid nobody --regid nogroup \
		--clear-groups "$CETCTL" run --trace-only "$XO/prog"
	# shellcheck disable=SC2154  # stderr: set by bats' run --separate-stderr
	echo "$status: $stderr"
	[ "$status" -eq 125 ]
	[[ $stderr == *'execute-only'*'program not run' ]]
	if unshare -pf --mount-proc true 2>/dev/null; then
		run --separate-stderr timeout -s KILL 30 unshare -pf --mount-proc setpriv \
			--reuid nobody --regid nogroup --clear-groups "$CETCTL" run --trace-only "$XO/prog"
		echo "as PID 1: $status: $stderr"
		[ "$status" -eq 125 ]
	fi
	rm -rf "$XO"
}

# "$@" run by sigexec.pl (tests/host/tools): as a caller hands down its
# signal state; killed after 30 s so that a hang is a failure, not a stall.
handed_down() {
	timeout -s KILL 30 perl "$HOST_TESTS/tools/sigexec.pl" "$@"
}

@test "run as a subreaper or PID 1, SIGCHLD ignored or signals blocked by the caller: the program's status (issue 32, 2)" {
	local how
	# an ignored SIGCHLD makes the kernel reap cetctl's child itself: its
	# status lost, cetctl waited for ever
	for how in "--subreaper --ignore CHLD" "--subreaper --block all" \
		"--subreaper --ignore CHLD --block all" "--subreaper --block CHLD"; do
		# shellcheck disable=SC2086  # the options, split on purpose
		run handed_down $how -- "$CETCTL" run --trace-only -- sh -c 'exit 3'
		[ "$status" -eq 3 ] || { echo "[$how] $status: $output"; return 1; }
	done
	unshare -pf --mount-proc true 2>/dev/null || skip "cannot make a pid namespace here"
	for how in "--ignore CHLD" "--block all" "--ignore CHLD --block all"; do
		# shellcheck disable=SC2086  # the options, split on purpose
		run timeout -s KILL 30 unshare -pf --mount-proc perl "$HOST_TESTS/tools/sigexec.pl" \
			$how -- "$CETCTL" run --trace-only -- sh -c 'exit 3'
		[ "$status" -eq 3 ] || { echo "[PID 1 $how] $status: $output"; return 1; }
	done
}

# Whether process $1 runs (exists and is not a zombie).
running() {
	[ -e "/proc/$1/stat" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]
}

@test "run as a subreaper with SIGCHLD ignored: a SIGTERM to cetctl ends the program and cetctl (issue 32, 2)" {
	perl "$HOST_TESTS/tools/sigexec.pl" --subreaper --ignore CHLD -- "$CETCTL" run --trace-only -- \
		sh -c 'echo $$ > "$0"; while :; do sleep 0.05; done' "$TMP/pid" &
	local cet
	cet=$!	# cetctl, once sigexec.pl exec'd it
	for _ in $(seq 200); do [ -s "$TMP/pid" ] && break; sleep 0.05; done
	[ -s "$TMP/pid" ]
	kill -TERM "$cet"
	for _ in $(seq 200); do running "$cet" || break; sleep 0.05; done
	if running "$cet"; then
		kill -KILL "$cet" "$(cat "$TMP/pid")" 2>/dev/null || :
		echo "cetctl still runs 10 s after SIGTERM"
		return 1
	fi
	rc=0; wait "$cet" || rc=$?
	[ "$rc" -eq 143 ] || { echo "cetctl ended with $rc"; return 1; }
	! kill -0 "$(cat "$TMP/pid")" 2>/dev/null
}

# The program of the job-control tests (tools/jobprog.py READY READLINE
# SECONDS): counts the SIGINTs it gets, prints "ints N line L", exits 7.
JOBPROG=(python3 "$HOST_TESTS/tools/jobprog.py")

ptyjob() {
	rm -f "$TMP/ready"
	timeout -s KILL 60 python3 "$HOST_TESTS/tools/ptyjob.py" "$TMP/ready" "$@"
}

@test "run as a subreaper on a terminal: ^Z stops the job, fg continues it (issue 32, 3)" {
	python3 -c 'import pty' 2>/dev/null || skip "no python3 pty module"
	# the program stopped, cetctl did not: the shell waited for the job
	# to stop, forever
	run ptyjob '^Z' perl "$HOST_TESTS/tools/sigexec.pl" --subreaper -- \
		"$CETCTL" run --trace-only "${JOBPROG[@]}" "$TMP/ready" 0 1
	[ "${lines[0]}" = "exit 7 stops 1" ] || { echo "$output"; return 1; }
	[[ "$output" == *"tty: "*"ints 0 line -"* ]] || { echo "$output"; return 1; }
	# twice, and with --method=glibc
	run ptyjob '^Z....^Z' perl "$HOST_TESTS/tools/sigexec.pl" --subreaper -- \
		"$CETCTL" run --trace-only --method=glibc "${JOBPROG[@]}" "$TMP/ready" 0 2
	[ "${lines[0]}" = "exit 7 stops 2" ] || { echo "$output"; return 1; }
}

@test "run as a subreaper on a terminal: ^C reaches the program once, and it reads the terminal (issue 32, 3)" {
	python3 -c 'import pty' 2>/dev/null || skip "no python3 pty module"
	# the terminal's SIGINT reached the program, and cetctl forwarded its
	# own copy: twice (two copies merge when the second comes before the
	# program took the first: three rounds, so that a doubled delivery shows)
	for round in 1 2 3; do
		run ptyjob '^C' perl "$HOST_TESTS/tools/sigexec.pl" --subreaper -- \
			"$CETCTL" run --trace-only "${JOBPROG[@]}" "$TMP/ready" 0 1
		[ "${lines[0]}" = "exit 7 stops 0" ] || { echo "round $round: $output"; return 1; }
		[[ "$output" == *"ints 1 line -"* ]] || { echo "round $round: $output"; return 1; }
	done
	# the program is in the terminal's foreground: it reads its line
	run ptyjob 'hello^J' perl "$HOST_TESTS/tools/sigexec.pl" --subreaper -- \
		"$CETCTL" run --trace-only "${JOBPROG[@]}" "$TMP/ready" 1 0
	[ "${lines[0]}" = "exit 7 stops 0" ] || { echo "$output"; return 1; }
	[[ "$output" == *"tty: ints 0 line hello"* ]] || { echo "$output"; return 1; }
}

@test "run as a subreaper: a signal sent to the process group reaches the program once (issue 32, 3)" {
	local out
	# a real-time signal: two copies queue, they cannot merge into one
	out=$(timeout -s KILL 60 perl -e 'if (my $p = fork) { my ($end, $gone) = (time + 30, 0);
		until (-e $ARGV[0]) { if (waitpid($p, 1) == $p) { $gone = 1; last }
			if (time > $end) { kill "KILL", -$p; last } select(undef, undef, undef, 0.01) }
		if ($gone || !-e $ARGV[0]) { print "not ready\n"; waitpid($p, 0); exit 1 }
		kill "RTMIN", -$p; waitpid($p, 0); exit 0 }
		setpgrp(0, 0); exec { $ARGV[1] } @ARGV[1 .. $#ARGV]' -- "$TMP/ready" \
		perl "$HOST_TESTS/tools/sigexec.pl" --subreaper -- \
		"$CETCTL" run --trace-only python3 "$HOST_TESTS/tools/count-sig.py" "$TMP/ready" RTMIN) || true
	[ "$out" = "got 1" ] || { echo "$out"; return 1; }
}

@test "run as a subreaper: ^Z sent to the process group stops and continues the job (issue 32, 3)" {
	local out
	rm -f "$TMP/ready"
	out=$(perl "$HOST_TESTS/tools/jobctl.pl" "@$TMP/ready" TSTP perl "$HOST_TESTS/tools/sigexec.pl" \
		--subreaper -- "$CETCTL" run --trace-only perl -e 'open(my $f, ">", $ARGV[0]) or die; close $f;
		select(undef, undef, undef, 0.05) for 1 .. 20; exit 7' "$TMP/ready") || true
	[[ "$out" =~ ^exit\ 7\ stops\ [1-9] ]] || { echo "$out"; return 1; }
}

@test "run as PID 1 (unshare -pf) on a terminal: ^C reaches the program once, ^Z stops the job (issue 32, 3)" {
	python3 -c 'import pty' 2>/dev/null || skip "no python3 pty module"
	unshare -pf --mount-proc true 2>/dev/null || skip "cannot make a pid namespace here"
	# cetctl shares unshare's process group, which the shell stops and
	# continues as one job: the terminal's ^C reached the program, and
	# cetctl passed on its own copy: twice
	# (two copies of SIGINT merge when the second comes before the program
	# took the first: three rounds, so that a doubled delivery shows)
	for round in 1 2 3; do
		run ptyjob '^C' unshare -pf --mount-proc "$CETCTL" run --trace-only "${JOBPROG[@]}" "$TMP/ready" 0 1
		[ "${lines[0]}" = "exit 7 stops 0" ] || { echo "round $round: $output"; return 1; }
		[[ "$output" == *"ints 1 line -"* ]] || { echo "round $round: $output"; return 1; }
	done
	run ptyjob '^Z' unshare -pf --mount-proc "$CETCTL" run --trace-only "${JOBPROG[@]}" "$TMP/ready" 0 1
	[ "${lines[0]}" = "exit 7 stops 1" ] || { echo "$output"; return 1; }
}

@test "run as PID 1 owning its terminal: ^Z does not leave the program stopped for ever (issue 32, 3)" {
	python3 -c 'import pty' 2>/dev/null || skip "no python3 pty module"
	unshare -pf --mount-proc true 2>/dev/null || skip "cannot make a pid namespace here"
	# a container's init with the terminal in its own group: nobody above
	# sees its job stop, and PID 1 cannot stop itself; the program stopped
	# by ^Z was never continued (the terminal hung)
	run ptyjob '^Z' unshare -pf --mount-proc perl "$HOST_TESTS/tools/sigexec.pl" --foreground -- \
		"$CETCTL" run --trace-only "${JOBPROG[@]}" "$TMP/ready" 0 1
	[ "${lines[0]}" = "exit 7 stops 0" ] || { echo "$output"; return 1; }
	[[ "$output" == *"ints 0 line -"* ]] || { echo "$output"; return 1; }
	# ^C still reaches it once, and it reads the terminal
	run ptyjob '^C' unshare -pf --mount-proc perl "$HOST_TESTS/tools/sigexec.pl" --foreground -- \
		"$CETCTL" run --trace-only "${JOBPROG[@]}" "$TMP/ready" 0 1
	[[ "$output" == *"ints 1 line -"* ]] || { echo "$output"; return 1; }
	run ptyjob 'hi^J' unshare -pf --mount-proc perl "$HOST_TESTS/tools/sigexec.pl" --foreground -- \
		"$CETCTL" run --trace-only "${JOBPROG[@]}" "$TMP/ready" 1 0
	[[ "$output" == *"tty: ints 0 line hi"* ]] || { echo "$output"; return 1; }
}

@test "run under unshare -p without --fork: refused with 125, says how to run it instead (issue 32, 7)" {
	unshare -p true 2>/dev/null || skip "cannot make a pid namespace here"
	# cetctl is not in the namespace its children go to: the first one it
	# forks would be that namespace's init, and no other could follow
	run --separate-stderr timeout -s KILL 30 unshare -p "$CETCTL" run --trace-only -- sh -c 'echo ran'
	# shellcheck disable=SC2154  # stderr: set by bats' run --separate-stderr
	echo "$status: $output | $stderr"
	[ "$status" -eq 125 ] && [ -z "$output" ]
	[[ $stderr == *'pid namespace'*'unshare -p without --fork'*'unshare --pid --fork'*'program not run' ]]
	[ "$(wc -l <<<"$stderr")" -eq 1 ]
	# the same once that namespace's init (here /bin/true) came and went:
	# every fork in it fails
	run --separate-stderr timeout -s KILL 30 unshare -p sh -c '/bin/true; exec "$0" run --trace-only true' "$CETCTL"
	echo "$status: $stderr"
	[ "$status" -eq 125 ] && [[ $stderr == *'unshare -p without --fork'*'program not run' ]]
	# without tracing, cetctl just becomes the program: nothing to refuse
	run timeout -s KILL 30 unshare -p "$CETCTL" run -- sh -c 'exit 4'
	[ "$status" -eq 4 ]
	# as it says: with --fork it runs
	run timeout -s KILL 30 unshare -pf --mount-proc "$CETCTL" run --trace-only -- sh -c 'exit 4'
	[ "$status" -eq 4 ]
}
