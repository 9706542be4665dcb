#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile conditions for `cetctl audit/status/info` (issue 7): 10,000
# processes audited while others start and exit, processes exiting in the
# middle of a read, zombies, kernel threads, pid reuse, permission denied,
# /proc mounted with hidepid=2, and recorded trees whose files are FIFOs,
# devices, loops or huge. Every run is under `timeout`; "sane" means the
# documented exit status, no sanitizer report, and valid JSON on stdout.
# The process populations come from hostile/spawn.c, built here with gcc.

load helpers

SPAWN_SRC=$HOST_TESTS/hostile/spawn.c

setup_file() {
	local out=$CETCTL_BUILD/hostile
	mkdir -p "$out"
	if [ ! -x "$out/spawn" ] || [ "$SPAWN_SRC" -nt "$out/spawn" ]; then
		gcc -O1 -Wall -Wextra -Werror -pthread -o "$out/spawn.tmp" "$SPAWN_SRC" &&
			mv "$out/spawn.tmp" "$out/spawn"
	fi
}

setup() {
	require_cetctl
	SPAWN=$CETCTL_BUILD/hostile/spawn
	[ -x "$SPAWN" ] || skip "hostile/spawn.c did not build (gcc)"
	TMP=$(mktemp -d "${BATS_TMPDIR:-/tmp}/cetctl-hostile.XXXXXX")
	chmod 755 "$TMP"
	bg=()
}

teardown() {
	cleanup_test
}

# the running kernel prints the shadow-stack feature lines
kernel_has_shstk_lines() {
	grep -q '^x86_Thread_features:' /proc/self/status
}

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

require_nobody() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to run cetctl as nobody"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
	"${NOBODY[@]}" test -x "$CETCTL" ||
		skip "nobody cannot execute $CETCTL (directory permissions)"
}

# sane ALLOWED...: the last `run` ended with one of the statuses, in time,
# with no sanitizer report
sane() {
	local s all="$output${stderr:-}"
	[ "$status" -ne 124 ] && [ "$status" -ne 137 ] || { echo "timed out: $all"; return 1; }
	[[ "$all" != *AddressSanitizer* && "$all" != *"runtime error"* &&
	   "$all" != *LeakSanitizer* ]] || { echo "$all"; return 1; }
	for s in "$@"; do
		[ "$status" -eq "$s" ] && return 0
	done
	echo "exit status $status: $all"
	return 1
}


# start_hold N: N idle children of spawn in the background; sets HOLD
# (spawn's pid) and HELD (how many it could make)
start_hold() {
	"$SPAWN" hold "$1" >"$TMP/hold.out" & HOLD=$!
	bg+=("$HOLD")
	for _ in $(seq 600); do
		grep -q '^ready' "$TMP/hold.out" 2>/dev/null && break
		sleep 0.1
	done
	HELD=$(awk '/^ready/ { print $2 }' "$TMP/hold.out")
	[ -n "$HELD" ]
}

# How many processes this machine lets us add: the wanted count bounded by
# RLIMIT_NPROC, pid_max and free memory (~150 KiB each), with margins.
proc_budget() {
	local want=$1 now lim pidmax memkb
	now=$(ls -d /proc/[0-9]* | wc -l)
	lim=$(ulimit -u)
	[ "$lim" = unlimited ] && lim=$want
	pidmax=$(cat /proc/sys/kernel/pid_max)
	memkb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
	for b in $((lim - now - 2000)) $((pidmax - now - 4000)) $((memkb / 2 / 150)); do
		[ "$b" -lt "$want" ] && want=$b
	done
	echo $((want < 0 ? 0 : want))
}

@test "hostile proc: 10,000 processes audited while others start and exit: valid JSON, exit 0" {
	local n
	n=$(proc_budget "${CETCTL_HOSTILE_NPROC:-10000}")
	[ "$n" -ge 1000 ] || skip "this machine allows only $n more processes"
	# before the 10,000: what this user cannot read anyway
	local denied
	denied=$(denied_exe_count)
	SECONDS=0
	start_hold "$n"
	[ "$HELD" -ge $((n * 9 / 10)) ] || { echo "fork stopped at $HELD of $n"; false; }
	"$SPAWN" churn 15 >"$TMP/churn.out" & bg+=($!)
	# 300 of the held processes die during the scan
	# shellcheck disable=SC2046  # pgrep prints one pid per line: one word each
	( sleep 0.2; kill -9 $(pgrep -P "$HOLD" | head -n 300) 2>/dev/null ) & bg+=($!)
	run --separate-stderr timeout -k 5 60 "$CETCTL" audit -J
	sane 0
	printf '%s' "$stderr" >"$TMP/stderr"
	drop_known_partial "$TMP/stderr" "$denied"
	[ ! -s "$TMP/stderr" ] || { echo "stderr: $stderr"; false; }
	rows=$(jq '[.processes[] | select(.comm == "hostile-hold")] | length' <<<"$output")
	churn=$(jq '[.processes[] | select(.comm == "hostile-churn")] | length' <<<"$output")
	# every held process not killed is there, exactly once
	[ "$rows" -ge $((HELD - 300)) ] && [ "$rows" -le "$HELD" ]
	[ "$(jq '[.processes[].pid] | length == (unique | length)' <<<"$output")" = true ]
	run --separate-stderr timeout -k 5 60 "$CETCTL" audit -J --require shstk
	# a kernel without shadow stacks cannot meet the policy: 2 (fails closed)
	if kernel_has_shstk_lines; then sane 0 1; else sane 2; fi
	jq -e .processes <<<"$output" >/dev/null
	echo "# $HELD held, $rows rows, $churn churn rows in the first scan, ${SECONDS} s" >&3
	[ "$SECONDS" -lt 90 ]
}

@test "hostile proc: status of processes that exit during the read: exit 0/1, valid JSON" {
	"$SPAWN" churn 6 >"$TMP/churn.out" & bg+=($!)
	local rounds=0 ok=0 gone=0 pids
	SECONDS=0
	while [ "$SECONDS" -lt 5 ]; do
		pids=$(pgrep -x hostile-churn | head -n 3 | tr '\n' ' ')
		[ -n "$pids" ] || continue
		# shellcheck disable=SC2086  # $pids: one pid per word
		run --separate-stderr timeout -k 2 20 "$CETCTL" status -J $pids
		sane 0 1
		jq -e .processes <<<"$output" >/dev/null
		if [ "$status" -eq 0 ]; then ok=$((ok + 1)); else
			gone=$((gone + 1))
			[[ "$stderr" == *"no such process"* || "$stderr" == *"zombie"* ||
			   "$stderr" == *"exited"* ]] || { echo "$stderr"; false; }
		fi
		rounds=$((rounds + 1))
	done
	echo "# $rounds rounds: $ok all read, $gone with processes gone" >&3
	[ "$rounds" -gt 0 ]
}

@test "hostile proc: a live zombie is left out of audit, status says zombie" {
	"$SPAWN" zombie >"$TMP/z.out" & bg+=($!)
	for _ in $(seq 50); do grep -q zombie "$TMP/z.out" && break; sleep 0.1; done
	z=$(awk '{ print $2 }' "$TMP/z.out")
	grep -q '^State:.Z' "/proc/$z/status"
	run --separate-stderr timeout -k 2 20 "$CETCTL" audit -J
	sane 0
	[ "$(jq --argjson z "$z" 'any(.processes[]; .pid == $z)' <<<"$output")" = false ]
	run --separate-stderr timeout -k 2 20 "$CETCTL" status -J "$z"
	sane 1
	[[ "$stderr" == *"$z: zombie process"* ]]
	jq -e '.processes == []' <<<"$output" >/dev/null
}

@test "hostile proc: kernel threads: none in audit, each refused by status" {
	kts=$(grep -l '^Kthread:.1' /proc/[0-9]*/status 2>/dev/null | cut -d/ -f3 | head -n 50)
	[ -n "$kts" ] || kts=$(awk '$4 == 2 { print $1 } $1 == 2 { print $1 }' /proc/[0-9]*/stat 2>/dev/null | head -n 50)
	[ -n "$kts" ] || skip "no kernel thread visible in this pid namespace"
	run --separate-stderr timeout -k 2 20 "$CETCTL" audit -J
	sane 0
	for k in $kts; do
		[ "$(jq --argjson k "$k" 'any(.processes[]; .pid == $k)' <<<"$output")" = false ] ||
			{ echo "kernel thread $k in audit"; false; }
	done
	# shellcheck disable=SC2086  # $kts: one pid per word
	run --separate-stderr timeout -k 2 20 "$CETCTL" status -J $kts
	sane 1
	jq -e '.processes == []' <<<"$output" >/dev/null
	# kworkers come and go: every kernel thread still there now was refused
	# as one, and none of the others was reported as anything but gone
	local refused alive=0
	refused=$(grep -c 'kernel thread' <<<"$stderr")
	for k in $kts; do [ -d "/proc/$k" ] && alive=$((alive + 1)); done
	[ "$refused" -ge "$alive" ] && [ "$refused" -le "$(wc -w <<<"$kts")" ] ||
		{ echo "refused $refused, alive $alive of $(wc -w <<<"$kts"): $stderr"; false; }
}

@test "hostile proc: pid reuse (a recorded pid swapped between two processes): never a torn row" {
	local root=$TMP/proc store=$TMP/store
	cp -a "$HOST_TESTS/fixtures/proc/cet-emulated" "$root"
	mkdir -p "$store"
	# A: pid 4001 as recorded (sleep, 1 thread); B: the python3 of 3115
	# (3 threads) as if it had been given pid 4001
	mv "$root/4001" "$store/A"
	cp -a "$root/3115" "$store/B"
	mv "$store/B/task/3115" "$store/B/task/4001"
	sed -i 's/\b3115\b/4001/g' "$store/B/status" "$store/B/stat" "$store"/B/task/*/status "$store"/B/task/*/stat
	# a reused pid belongs to a process that started later (stat field 22)
	for f in "$store/B/stat" "$store"/B/task/*/stat; do
		awk '{ $22 = $22 + 1000; print }' "$f" >"$f.new" && mv "$f.new" "$f"
	done
	ln -s ../store/A "$root/4001"
	# the pid changes hands every 20 ms (a real pid is reused far more slowly)
	( while [ ! -e "$TMP/.stop" ]; do
		ln -sfn ../store/B "$root/.n" && mv -Tf "$root/.n" "$root/4001"
		sleep 0.02
		ln -sfn ../store/A "$root/.n" && mv -Tf "$root/.n" "$root/4001"
		sleep 0.02
	  done ) & bg+=($!)
	local a=0 b=0 gone=0 torn=0 row
	for _ in $(seq 150); do
		run --separate-stderr timeout -k 2 20 "$CETCTL" --proc-root "$root" status -J -o PID,COMM,EXE,THREADS 4001
		sane 0 1
		row=$(jq -c '.processes[0] // empty | [.comm, .exe, .threads]' <<<"$output")
		case $row in
		'["sleep","/usr/bin/sleep",1]') a=$((a + 1)) ;;
		'["python3","/usr/bin/python3.11",3]') b=$((b + 1)) ;;
		'') gone=$((gone + 1)) ;;
		*) torn=$((torn + 1)); echo "torn row: $row" ;;
		esac
		run --separate-stderr timeout -k 2 20 "$CETCTL" --proc-root "$root" audit -J
		sane 0
		jq -e .processes <<<"$output" >/dev/null
	done
	touch "$TMP/.stop"
	wait "${bg[0]}" || true
	echo "# 150 reads: $a as A, $b as B, $gone gone, $torn torn" >&3
	[ "$torn" -eq 0 ]
}

@test "hostile proc: audit and status as nobody: other users' processes are shown, not fatal" {
	require_nobody
	sleep 30 & bg+=($!)
	local victim=$!
	run --separate-stderr timeout -k 2 30 "${NOBODY[@]}" "$CETCTL" audit -J -o PID,USER,COMM,EXE,MARKING
	sane 0
	# root's sleep is listed, its exe unreadable for nobody
	[ "$(jq --argjson v "$victim" '[.processes[] | select(.pid == $v)] | .[0].user' <<<"$output")" = '"root"' ]
	[ "$(jq --argjson v "$victim" '[.processes[] | select(.pid == $v)] | .[0].exe' <<<"$output")" = '""' ] ||
	[ "$(jq --argjson v "$victim" '[.processes[] | select(.pid == $v)] | .[0].exe' <<<"$output")" = null ]
	run --separate-stderr timeout -k 2 30 "${NOBODY[@]}" "$CETCTL" audit -J --user root --require shstk
	if kernel_has_shstk_lines; then sane 0 1; else sane 2; fi
	jq -e .processes <<<"$output" >/dev/null
}

@test "hostile proc: audit as nobody says on stderr how many processes it read only in part, and why" {
	require_nobody
	sleep 30 & bg+=($!)
	local victim=$!
	run --separate-stderr timeout -k 2 30 "${NOBODY[@]}" "$CETCTL" audit -J -o PID,MARKING
	sane 0
	echo "$stderr"
	# root's sleep: its executable's marking is unknown to nobody
	[[ $stderr =~ cetctl:\ audit:\ [0-9]+\ of\ [0-9]+\ processes\ could\ be\ read\ only\ in\ part ]]
	[[ $stderr == *"Permission denied"* ]]
	[ "$(jq '.summary.partial' <<<"$output")" -ge 1 ]
	[[ $stderr == *"run it as root"* ]]
	# root reads its sleep in full: nothing said
	run --separate-stderr timeout -k 2 30 "$CETCTL" audit -J -o PID,MARKING --pid "$victim"
	sane 0
	[[ $stderr != *"in part"* ]]
	[ "$(jq '.summary.partial' <<<"$output")" -eq 0 ]
}

@test "hostile proc: recorded tree as nobody: unreadable smaps and status are counted and said" {
	require_nobody
	local root=$TMP/proc
	cp -a "$HOST_TESTS/fixtures/proc/cet-emulated" "$root"
	local single unlocked
	single=$(awk '$1 == "single" { print $2 }' "$root/roles")
	unlocked=$(awk '$1 == "unlocked" { print $2 }' "$root/roles")
	chmod 000 "$root/$single/smaps" "$root/$unlocked/status"
	run --separate-stderr timeout -k 2 30 "${NOBODY[@]}" "$CETCTL" --proc-root "$root" audit -J
	sane 0
	echo "$stderr"
	[[ $stderr == *"cetctl: audit: 1 process could not be read: Permission denied"* ]]
	[[ $stderr == *"cetctl: audit: 1 of 6 processes could be read only in part"*"Permission denied"* ]]
	[ "$(jq '.summary.partial' <<<"$output")" -eq 1 ]
	[ "$(jq '.summary.skipped.unreadable' <<<"$output")" -eq 1 ]
	# --require fails closed over the process it could not judge (the
	# other one meets it; offenders would be exit 1 first)
	run --separate-stderr timeout -k 2 30 "${NOBODY[@]}" "$CETCTL" --proc-root "$root" audit \
		--require shstk --pid "$single,$unlocked"
	sane 3
	[[ $stderr == *"could not be checked"* ]]
}

@test "hostile proc: /proc with hidepid=invisible (its mountinfo): said, counted as hidden, --require exits 3" {
	require_nobody
	local root=$TMP/proc
	cp -a "$HOST_TESTS/fixtures/proc/cet-emulated" "$root"
	printf '22 1 0:21 / %s rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw,hidepid=invisible\n' \
		"$root" >"$root/self/mountinfo"
	run --separate-stderr timeout -k 2 30 "${NOBODY[@]}" "$CETCTL" --proc-root "$root" audit -J
	sane 0
	echo "$stderr"
	[[ $stderr == *"cetctl: audit: $root is mounted with hidepid=invisible: other users' processes are hidden"* ]]
	[ "$(jq '.summary.hidepid' <<<"$output")" = '"invisible"' ]
	run --separate-stderr timeout -k 2 30 "${NOBODY[@]}" "$CETCTL" --proc-root "$root" audit \
		--require shstk --pid "$(awk '$1 == "single" { print $2 }' "$root/roles")"
	sane 3
	[[ $stderr == *"other users' processes could not be checked (hidepid=invisible)"* ]]
	# hidepid=0 and root (who sees every process) are not warned
	run --separate-stderr timeout -k 2 30 "$CETCTL" --proc-root "$root" audit -J
	sane 0
	[[ $stderr != *hidepid* ]]
	[ "$(jq '.summary.hidepid' <<<"$output")" = null ]
	sed -i 's/hidepid=invisible/hidepid=0/' "$root/self/mountinfo"
	run --separate-stderr timeout -k 2 30 "${NOBODY[@]}" "$CETCTL" --proc-root "$root" audit -J
	[[ $stderr != *hidepid* ]]
}

@test "hostile proc: a command name with a backslash or newline is shown and matched as the real name" {
	# the kernel prints them in status as "a\\b" and "a\nb"
	cp /usr/bin/sleep "$TMP/a\\b"
	cp /usr/bin/sleep "$TMP/n"$'\n'"l"
	"$TMP/a\\b" 30 & bg+=($!)
	local bs=$!
	# shellcheck disable=SC2289  # the program's name holds a newline: what the test is about
	"$TMP/n"$'\n'"l" 30 & bg+=($!)
	local nl=$!
	sleep 0.2
	[ "$(cat /proc/$bs/comm)" = 'a\b' ]
	run --separate-stderr "$CETCTL" status -J -o PID,COMM "$bs" "$nl"
	sane 0
	[ "$(jq -r '.processes[0].comm' <<<"$output")" = 'a\b' ]
	[ "$(jq -r '.processes[0].tasks[0].comm' <<<"$output")" = 'a\b' ]
	[ "$(jq -r '.processes[1].comm' <<<"$output")" = "n"$'\n'"l" ]
	run --separate-stderr "$CETCTL" audit -J -o PID,COMM --comm 'a\b'
	sane 0
	[ "$(jq '[.processes[].pid] == ['"$bs"']' <<<"$output")" = true ]
	run --separate-stderr "$CETCTL" audit -J -o PID,COMM --comm "n"$'\n'"l"
	[ "$(jq '[.processes[].pid] == ['"$nl"']' <<<"$output")" = true ]
	# the kernel's escaped form is not the name
	run --separate-stderr "$CETCTL" audit -J -o PID --comm 'a\\b'
	[ "$(jq '.processes | length' <<<"$output")" -eq 0 ]
	# tables: the real name, a newline as \x0a (libsmartcols), raw: \x5c
	run --separate-stderr "$CETCTL" audit -n -o COMM --pid "$bs,$nl"
	[ "$output" = 'a\b'$'\n''n\x0al' ] || { echo "$output"; false; }
	run --separate-stderr "$CETCTL" status -n --raw -o COMM "$bs"
	[ "$output" = 'a\x5cb' ] || { echo "$output"; false; }
}

@test "hostile proc: /proc mounted with hidepid=2: nobody sees only its own processes" {
	require_nobody
	command -v unshare >/dev/null || skip "unshare (util-linux) not installed"
	mkdir "$TMP/proc"
	unshare -m --propagation private true 2>/dev/null || skip "cannot create a mount namespace here"
	"${NOBODY[@]}" sleep 30 & bg+=($!)
	local mine=$!
	sleep 30 & bg+=($!)
	local roots=$!
	# a private proc instance with hidepid=2, in a private mount namespace
	run --separate-stderr timeout -k 2 30 unshare -m --propagation private sh -c '
		mount -t proc -o hidepid=2 proc "$1" || exit 99
		shift
		exec "$@"' sh "$TMP/proc" "${NOBODY[@]}" "$CETCTL" --proc-root "$TMP/proc" audit -J -o PID,USER,COMM
	[ "$status" -ne 99 ] || skip "mounting proc with hidepid=2 is not allowed here"
	sane 0
	[[ $stderr == *"$TMP/proc is mounted with hidepid="*"other users' processes are hidden"* ]] || { echo "$stderr"; false; }
	[ "$(jq --argjson p "$mine" 'any(.processes[]; .pid == $p)' <<<"$output")" = true ]
	[ "$(jq --argjson p "$roots" 'any(.processes[]; .pid == $p)' <<<"$output")" = false ]
	[ "$(jq '[.processes[] | select(.user != "nobody")] | length' <<<"$output")" -eq 0 ]
	# a hidden pid is "no such process", exit 1
	run --separate-stderr timeout -k 2 30 unshare -m --propagation private sh -c '
		mount -t proc -o hidepid=2 proc "$1" || exit 99
		shift
		exec "$@"' sh "$TMP/proc" "${NOBODY[@]}" "$CETCTL" --proc-root "$TMP/proc" status -J "$roots"
	sane 1
	[[ "$stderr" == *"$roots: no such process"* ]]
}

@test "hostile proc: recorded trees whose files are FIFOs, devices, loops, directories or 10 GiB" {
	local root=$TMP/proc
	local kinds=(fifo zero urandom loop dir sparse missing)
	local k f
	for k in "${kinds[@]}"; do
		for f in status smaps maps stat exe task; do
			rm -rf "$root"
			cp -a "$HOST_TESTS/fixtures/proc/cet-emulated" "$root"
			rm -rf "${root:?}/4001/$f"
			case $k in
			fifo) mkfifo "$root/4001/$f" ;;
			zero) ln -s /dev/zero "$root/4001/$f" ;;
			urandom) ln -s /dev/urandom "$root/4001/$f" ;;
			loop) ln -s "$f" "$root/4001/$f" ;;
			dir) mkdir "$root/4001/$f" ;;
			sparse) truncate -s 10G "$root/4001/$f" ;;
			missing) ;;
			esac
			run --separate-stderr timeout -k 2 20 "$CETCTL" --proc-root "$root" status -J 4001
			sane 0 1 || { echo "status with $f as $k"; false; }
			jq -e .processes <<<"$output" >/dev/null
			run --separate-stderr timeout -k 2 20 "$CETCTL" --proc-root "$root" audit -J
			sane 0 || { echo "audit with $f as $k"; false; }
			jq -e .processes <<<"$output" >/dev/null
		done
	done
	# the system files info reads
	for k in fifo zero sparse loop; do
		for f in cpuinfo cmdline config.gz; do
			rm -rf "$root"
			cp -a "$HOST_TESTS/fixtures/proc/cet-emulated" "$root"
			rm -f "$root/$f"
			case $k in
			fifo) mkfifo "$root/$f" ;;
			zero) ln -s /dev/zero "$root/$f" ;;
			sparse) truncate -s 10G "$root/$f" ;;
			loop) ln -s "$f" "$root/$f" ;;
			esac
			run --separate-stderr timeout -k 2 20 "$CETCTL" --proc-root "$root" info -J
			sane 0 1 2 || { echo "info with $f as $k"; false; }
			jq -e . <<<"$output" >/dev/null
		done
	done
}
