#!/usr/bin/env bats
# cetctl status: against recorded /proc trees (tests/host/fixtures/proc, see
# derive-cet-fixtures.py for what was edited) and against live processes of
# this host.

setup_file() {
	export CETCTL="${CETCTL:-$BATS_TEST_DIRNAME/../../build/cetctl}"
	export FIX="$BATS_TEST_DIRNAME/fixtures/proc"
}

setup() {
	[ -x "$CETCTL" ] || skip "cetctl not built at $CETCTL"
	pids_to_kill=()
}

jqs() {	# jqs TEXT [jq args] FILTER: jq -e on TEXT, which must hold JSON
	# (jq 1.6 exits 0 on empty input, so an empty output would pass)
	local in=$1; shift
	[[ $in == *[\{\[]* ]] || { echo "no JSON in: '$in'"; return 1; }
	printf '%s\n' "$in" | jq -e "$@"
}

teardown() {
	local p
	for p in "${pids_to_kill[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids_to_kill[@]}"; do wait "$p" 2>/dev/null || true; done
}

role() {	# role TREE NAME -> the recorded pid
	awk -v r="$2" '$1 == r { print $2 }' "$FIX/$1/roles"
}

cet() {	# cet TREE args... : cetctl against a recorded tree
	local tree=$1 rc=0; shift
	# the "reading TREE instead of /proc" note is proc-root.bats' business
	"$CETCTL" --proc-root "$FIX/$tree" "$@" 2>"$BATS_FILE_TMPDIR/cet.err" || rc=$?
	grep -v ' instead of /proc (' "$BATS_FILE_TMPDIR/cet.err" >&2
	return $rc
}

@test "status: enabled and locked, with its shadow-stack VMA (recorded, edited)" {
	pid=$(role cet-emulated single)
	run cet cet-emulated status -J -o PID,FEATURES,LOCKED,SHSTK,WRSS,SHSTK-LOCKED,SS-VMAS,SS-SIZE,SS-RSS,VERDICT "$pid"
	[ "$status" -eq 0 ]
	jqs "$output" --argjson p "$pid" '.processes | length == 1 and .[0].pid == $p'
	jqs "$output" '.processes[0] | .features == ["shstk"] and .locked == ["shstk"]'
	jqs "$output" '.processes[0] | .shstk == true and .wrss == false and ."shstk-locked" == true'
	jqs "$output" '.processes[0]."ss-vmas" | length == 1 and (.[0] | (.start | test("^0x[0-9a-f]+$")) and .size == 8192 and .rss == 4)'
	jqs "$output" '.processes[0] | ."ss-size" == 8192 and ."ss-rss" == 4'
	jqs "$output" '.processes[0].verdict == "enabled and locked"'
}

@test "status: wrss enabled is reported and explained" {
	run cet cet-emulated status -J -o FEATURES,WRSS,VERDICT "$(role cet-emulated wrss)"
	[ "$status" -eq 0 ]
	jqs "$output" '.processes[0] | .features == ["shstk", "wrss"] and .wrss == true'
	jqs "$output" '.processes[0].verdict | test("WRSS on: the process can write its own shadow stack")'
}

@test "status: enabled but not locked says the process can turn it off" {
	run cet cet-emulated status -o VERDICT -n "$(role cet-emulated unlocked)"
	[ "$status" -eq 0 ]
	[ "$output" = "enabled, not locked: the process can turn it off" ]
}

@test "status: unknown feature words are shown, not dropped" {
	run cet cet-emulated status -o FEATURES,LOCKED -n --raw "$(role cet-emulated unknown)"
	[ "$status" -eq 0 ]
	[ "$output" = "shstk\\x20future_feat shstk" ] || [ "$output" = "shstk future_feat shstk" ]
}

@test "status: locked off (not enabled, locked) is explained" {
	run cet cet-emulated status -o VERDICT -n "$(role cet-emulated offlocked)"
	[ "$status" -eq 0 ]
	[[ "$output" == "not enabled, and locked off"* ]]
}

@test "status: threads are listed below their process, a mixed process is called mixed" {
	pid=$(role cet-emulated threads)
	run cet cet-emulated status -J -o PID,TID,COMM,FEATURES,SHSTK,THREADS,SS-VMAS,VERDICT "$pid"
	[ "$status" -eq 0 ]
	jqs "$output" '.processes[0].threads == 3'
	jqs "$output" '.processes[0].tasks | length == 3'
	jqs "$output" '[.processes[0].tasks[].shstk] == [true, true, false]'
	jqs "$output" --argjson p "$pid" '.processes[0].tasks[0].tid == $p'
	jqs "$output" '.processes[0]."ss-vmas" | length == 2'
	jqs "$output" '.processes[0].verdict == "mixed: 2 of 3 threads run with a shadow stack"'
}

@test "status: a process that exits while being read: message, exit 1, no row" {
	run cet cet-emulated status -J "$(role cet-emulated vanished)"
	[ "$status" -eq 1 ]
	[[ "$output" == *"process exited while being read"* ]]
	[[ "$output" != *'"verdict"'* ]]
}

@test "status: zombie (recorded): clear message, exit 1" {
	run cet host-nocet status "$(role host-nocet zombie)"
	[ "$status" -eq 1 ]
	[[ "$output" == *"zombie process"* ]]
}

@test "status: kernel thread (recorded kthreadd): clear message, exit 1" {
	run cet host-nocet status 2
	[ "$status" -eq 1 ]
	[[ "$output" == *"2: kernel thread"* ]]
}

@test "status: no such process in a recorded tree: exit 1" {
	run cet host-nocet status 999999
	[ "$status" -eq 1 ]
	[[ "$output" == *"999999: no such process"* ]]
}

@test "status: one bad pid among good ones: the good ones are shown, exit 1" {
	good=$(role cet-emulated single)
	run cet cet-emulated status -J "$good" 999999
	[ "$status" -eq 1 ]
	[[ "$output" == *"999999: no such process"* ]]
	json=$(echo "$output" | sed -n '/^{/,/^}/p')
	jqs "$json" --argjson p "$good" '[.processes[].pid] == [$p]'
}

@test "status: kernel without the lines (recorded on this host) says so, exit 0" {
	run cet host-nocet status -J -o FEATURES,LOCKED,SHSTK,VERDICT self
	[ "$status" -eq 0 ]
	jqs "$output" '.processes[0] | .features == null and .locked == null and .shstk == null'
	jqs "$output" '.processes[0].verdict == "kernel has no shadow-stack support (no x86_Thread_features line)"'
}

@test "status: self in a recorded tree follows its self link" {
	run cet cet-emulated status -o PID -n self
	[ "$status" -eq 0 ]
	[ "$output" -eq "$(readlink "$FIX/cet-emulated/self")" ]
}

@test "status: ss VMAs are not taken as x86 shadow stacks when cpuinfo is not x86" {
	run cet arm64-ss status -J -o PID,SS-VMAS,SS-SIZE self
	[ "$status" -eq 0 ]
	[[ "$output" == *'"ss" is not an x86 shadow stack here'* ]]
	json=$(echo "$output" | sed -n '/^{/,/^}/p')
	jqs "$json" '.processes[0]."ss-size" == null'
}

@test "status: -o, -n, --raw and --list-columns" {
	run cet cet-emulated status -n --raw -o PID,COMM "$(role cet-emulated single)"
	[ "$status" -eq 0 ]
	[ "$output" = "$(role cet-emulated single) sleep" ]
	run "$CETCTL" status --list-columns
	[ "$status" -eq 0 ]
	for c in PID TID FEATURES LOCKED SS-VMAS MARKING UNMARKED VERDICT; do
		[[ "$output" == *"$c"* ]]
	done
	run "$CETCTL" status --list-columns -J
	jqs "$output" '.columns | length >= 18'
}

@test "status: usage errors exit 1 with a hint" {
	run "$CETCTL" status
	[ "$status" -eq 1 ]
	[[ "$output" == *"Try 'cetctl status --help'"* ]]
	run "$CETCTL" status not-a-pid
	[ "$status" -eq 1 ]
	[[ "$output" == *"invalid process id"* ]]
	run "$CETCTL" status -o NOPE self
	[ "$status" -eq 1 ]
	[[ "$output" == *"unknown column"* ]]
	run "$CETCTL" status --bogus
	[ "$status" -eq 1 ]
	run "$CETCTL" status --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Usage: cetctl status"* ]]
}

# ---- live processes on this host ----

@test "status (live): self agrees with /proc/self/status" {
	run "$CETCTL" status -J -o PID,COMM,FEATURES,VERDICT self
	[ "$status" -eq 0 ]
	jqs "$output" '.processes[0].comm == "cetctl"'
	if grep -q '^x86_Thread_features:' /proc/self/status; then
		jqs "$output" '.processes[0].features != null'
	else
		jqs "$output" '.processes[0].features == null'
		jqs "$output" '.processes[0].verdict | startswith("kernel has no shadow-stack support")'
	fi
}

@test "status (live): a pid that has exited: no such process, exit 1" {
	true & dead=$!
	wait "$dead"
	run "$CETCTL" status "$dead"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$dead: no such process"* ]]
}

@test "status (live): a zombie: clear message, exit 1" {
	# the child exits after its parent became `sleep 30` by exec, which never
	# reaps it (a child that exits before the exec could be reaped by bash)
	bash -c 'sleep 0.3 & exec sleep 30' & parent=$!
	pids_to_kill+=("$parent")
	for _ in $(seq 50); do
		z=$(cat /proc/$parent/task/$parent/children 2>/dev/null | tr -d ' ')
		[ -n "$z" ] && grep -q '^State:.Z' /proc/$z/status 2>/dev/null && break
		sleep 0.1
	done
	[ -n "$z" ]
	run "$CETCTL" status "$z"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$z: zombie process"* ]]
}

@test "status (live): a kernel thread: clear message, exit 1" {
	kt=$(grep -l '^Kthread:.1' /proc/[0-9]*/status 2>/dev/null | head -1 | cut -d/ -f3)
	[ -n "$kt" ] || skip "no kernel thread visible in this pid namespace"
	run "$CETCTL" status "$kt"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$kt: kernel thread"* ]]
}

@test "status (live): permission denied reading another user's process: row shown, exit 1" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to run cetctl as nobody"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$CETCTL" ||
		skip "nobody cannot execute $CETCTL (directory permissions)"
	sleep 30 & victim=$!
	pids_to_kill+=("$victim")
	# until it has exec'd, the child's name is the shell's (a loaded machine)
	local i comm=
	for ((i = 0; i < 500; i++)); do
		read -r comm < "/proc/$victim/comm" || break
		[ "$comm" = sleep ] && break
		sleep 0.01
	done
	[ "$comm" = sleep ] || { echo "the child did not exec sleep: $comm"; return 1; }
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$CETCTL" status -o PID,COMM,SS-SIZE -n "$victim"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$victim: cannot read smaps: Permission denied"* ]]
	[[ "$output" == *"$victim"*sleep* ]]
	# columns that do not need smaps, exe or maps: nothing to deny (status-reads.bats)
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$CETCTL" status -o PID,COMM -n "$victim"
	[ "$status" -eq 0 ]
	[[ "$output" != *"Permission denied"* ]]
}

@test "status (live): every thread of a threaded process is listed" {
	command -v python3 >/dev/null || skip "python3 not installed"
	python3 -c 'import threading,time
for _ in range(3): threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
time.sleep(30)' & py=$!
	pids_to_kill+=("$py")
	for _ in $(seq 50); do
		[ "$(ls /proc/$py/task 2>/dev/null | wc -l)" -ge 4 ] && break
		sleep 0.1
	done
	run "$CETCTL" status -J -o PID,TID,COMM,THREADS "$py"
	[ "$status" -eq 0 ]
	jqs "$output" '.processes[0].threads == 4 and (.processes[0].tasks | length) == 4'
	[ "$(echo "$output" | jq '[.processes[0].tasks[].tid] | sort')" = \
	  "$(ls /proc/$py/task | sort -n | jq -s .)" ]
}

@test "status (live): the marking of a marked executable is shown (shstk,ibt)" {
	command -v gcc >/dev/null || skip "gcc not installed"
	src="$BATS_TEST_TMPDIR/marked.c"
	cat > "$src" <<-'EOF'
	/* static, no libc: marked IBT+SHSTK by the linker, sleeps */
	#include <sys/syscall.h>
	__attribute__((force_align_arg_pointer, noreturn)) void _start(void)
	{
		long t[2] = { 3600, 0 }, r;
		for (;;)
			__asm__ volatile("syscall" : "=a"(r) : "a"((long)SYS_nanosleep), "D"(t), "S"(0L)
					 : "rcx", "r11", "memory");
	}
	EOF
	gcc -O2 -nostdlib -static -fcf-protection=full -Wl,-z,shstk -Wl,-z,ibt \
		-o "$BATS_TEST_TMPDIR/marked" "$src"
	"$BATS_TEST_TMPDIR/marked" & m=$!
	pids_to_kill+=("$m")
	sleep 0.2
	run "$CETCTL" status -J -o PID,MARKING,OBJECTS,UNMARKED,VERDICT "$m"
	[ "$status" -eq 0 ]
	jqs "$output" '.processes[0].marking == ["shstk", "ibt"]'
	jqs "$output" '.processes[0].objects == 1'
	if ! grep -q '^x86_Thread_features:' /proc/$m/status; then
		jqs "$output" '.processes[0].verdict | startswith("kernel has no shadow-stack support")'
	fi
	# and an unmarked one (sleep from coreutils: Debian does not mark it)
	sleep 30 & s=$!
	pids_to_kill+=("$s")
	# asked too early, the child is still bash before exec, or the loader
	# has not mapped libc yet: wait (at most 5 s) until it has
	for _ in $(seq 50); do
		grep -q 'libc[.]so' "/proc/$s/maps" 2>/dev/null && break
		sleep 0.1
	done
	run "$CETCTL" status -J -o MARKING,UNMARKED "$s"
	[ "$status" -eq 0 ]
	jqs "$output" '.processes[0].marking == []'
	jqs "$output" '.processes[0].unmarked | any(. != null and test("libc[.]so"))'
}

@test "status (live): processes exiting around the read give only the documented outcomes" {
	# Short-lived processes, each asked about while it is starting or dying:
	# every answer must be a row (0) or one of the documented messages (1).
	for i in $(seq 60); do
		sleep 0.0$((RANDOM % 5)) & p=$!
		run "$CETCTL" status -o PID -n "$p"
		case "$status" in
		0) [[ "$output" == *"$p"* ]] ;;
		1) [[ "$output" =~ (no\ such\ process|zombie\ process|exited\ while\ being\ read) ]] ||
			{ echo "unexpected: $output"; false; } ;;
		*) echo "exit $status: $output"; false ;;
		esac
		wait "$p" 2>/dev/null || true
	done
}

@test "status -o SSP: no shadow stack on this thread shows -, and the thread runs on" {
	sleep 30 &
	local p=$!
	pids_to_kill+=("$p")
	run "$CETCTL" status -n -o PID,SSP "$p"
	[ "$status" -eq 0 ]
	# this host's CPU has no CET: the kernel has no active SSP regset for it
	[[ $output =~ ^\ *$p\ +-$ ]] || { echo "output: '$output'"; return 1; }
	# the ptrace stop was undone: the thread sleeps, not stopped or traced
	grep -q '^State:.*S (sleeping)' "/proc/$p/status"
	grep -q '^TracerPid:.*0$' "/proc/$p/status"
	kill -0 "$p"
}

@test "status -o SSP without ptrace permission: ?, one error for the process, exit 1" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to run cetctl as nobody"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$CETCTL" ||
		skip "nobody cannot execute $CETCTL (directory permissions)"
	sleep 30 &
	local p=$!
	pids_to_kill+=("$p")
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$CETCTL" status -n -o PID,SSP "$p"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"$p: cannot read the SSP of 1 thread(s): Operation not permitted"* ]]
	[[ $output =~ (^|$'\n')\ *$p\ +\?($|$'\n') ]]
}
