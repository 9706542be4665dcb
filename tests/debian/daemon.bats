#!/usr/bin/env bats
# A real daemon as a system service under cetctl: Debian's lighttpd.service with the
# drop-in of vm/debian-guest (ExecStart=cetctl run --shstk -- lighttpd -D ...), serving
# over loopback; systemd sees its failures and exit statuses; stop and restart work.
# Without CET (QEMU) `run --shstk` refuses with 125 before lighttpd runs: systemd must
# see that; the service path is then tested with `cetctl run --` (no --shstk: cetctl
# executes the program in its place) from a runtime drop-in.
load lib

URL=http://127.0.0.1/
NOSHSTK=/run/systemd/system/lighttpd.service.d/zz-cetctl-test-noshstk.conf

setup_file() {
	if ! has_cet; then
		mkdir -p "${NOSHSTK%/*}"
		printf '[Service]\nExecStart=\nExecStart=/usr/bin/cetctl run -- /usr/sbin/lighttpd -D -f /etc/lighttpd/lighttpd.conf\n' > "$NOSHSTK.off"
	fi
}

serving() { http "$URL" | grep -qi 'lighttpd'; }
two_workers() { local w; mapfile -t w < <(children "$1" lighttpd); ((${#w[@]} == 2)); }

@test "lighttpd.service runs lighttpd under cetctl run --shstk (drop-in)" {
	run systemctl cat lighttpd.service
	[[ $output == *"ExecStart=/usr/bin/cetctl run --shstk -- /usr/sbin/lighttpd -D"* ]]
}

@test "no CET: systemd sees cetctl refuse with 125 at boot and on restart, nothing listens" {
	has_cet && skip "this CPU has CET (the refusal is QEMU's case)"
	wait_for 60 unit_settled lighttpd.service
	echo "boot: $(prop lighttpd.service ActiveState) Result=$(prop lighttpd.service Result) status=$(prop lighttpd.service ExecMainStatus) restarts=$(prop lighttpd.service NRestarts)"
	[ "$(prop lighttpd.service ActiveState)" = failed ]
	[ "$(prop lighttpd.service Result)" = exit-code ]
	[ "$(prop lighttpd.service ExecMainStatus)" = 125 ]
	# RestartPreventExitStatus=125 (the drop-in): no futile restarts
	[ "$(prop lighttpd.service NRestarts)" = 0 ]
	journalctl -b -u lighttpd.service --no-pager | grep 'cetctl' | tail -n 3
	journalctl -b -u lighttpd.service --no-pager | grep -q 'cetctl: run:'
	# Type=simple: the restart job is done once the process runs; then it fails again
	systemctl restart lighttpd.service || true
	wait_for 60 unit_settled lighttpd.service
	[ "$(prop lighttpd.service ActiveState)" = failed ]
	[ "$(prop lighttpd.service ExecMainStatus)" = 125 ]
	run http "$URL"
	[ "$status" -ne 0 ]
}

@test "the daemon started by systemd through cetctl serves requests over loopback" {
	if ! has_cet; then
		mv "$NOSHSTK.off" "$NOSHSTK"
		systemctl daemon-reload
		systemctl reset-failed lighttpd.service
	fi
	systemctl start lighttpd.service
	wait_for 60 serving
	[ "$(prop lighttpd.service ActiveState)" = active ]
	pid=$(prop lighttpd.service MainPID)
	# cetctl ran lighttpd in its own process: the main PID is lighttpd's
	[ "$(readlink "/proc/$pid/exe")" = /usr/sbin/lighttpd ]
	for _ in 1 2 3 4 5; do serving; done
}

@test "lighttpd runs its workers in the service's cgroup" {
	pid=$(prop lighttpd.service MainPID)
	# the master forks them once it is up: under Bochs that takes a while
	wait_for 120 two_workers "$pid"
	# counted in bash: coreutils' wc dies of SIGILL under Bochs (lib.bash)
	mapfile -t workers < <(children "$pid" lighttpd)
	echo "main $pid, workers: ${workers[*]}"
	[ "${#workers[@]}" -eq 2 ]
	[ "$(systemctl show -P ControlGroup lighttpd.service)" = /system.slice/lighttpd.service ]
	mapfile -t procs < /sys/fs/cgroup/system.slice/lighttpd.service/cgroup.procs
	[ "${#procs[@]}" -eq 3 ]
	# cetctl audit --unit selects the same three, by the unit's name as systemctl takes it
	run cetctl audit -n --raw -o PID,UNIT --unit lighttpd
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "${procs[@]}" | sort -n | sed 's/$/ lighttpd.service/')" = "$output" ]
}

@test "CET: cetctl status shows lighttpd and its workers enabled and locked" {
	has_cet || skip "no CET in this CPU (QEMU): the Bochs run shows it"
	pid=$(prop lighttpd.service MainPID)
	wait_for 120 two_workers "$pid"
	mapfile -t workers < <(children "$pid" lighttpd)
	echo "main $pid, workers: ${workers[*]}"
	[ "${#workers[@]}" -eq 2 ]
	for p in "$pid" "${workers[@]}"; do
		run cetctl status "$p"
		echo "$output"
		[ "$status" -eq 0 ]
		grep -Eiq 'enabled.*locked|locked.*enabled' <<<"$output"
	done
	run cetctl audit --require shstk,locked --comm lighttpd
	echo "$output"
	[ "$status" -eq 0 ]
	run cetctl audit --require shstk,locked --unit lighttpd
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "restart: a new lighttpd main process serves" {
	old=$(prop lighttpd.service MainPID)
	systemctl restart lighttpd.service
	wait_for 60 serving
	new=$(prop lighttpd.service MainPID)
	echo "MainPID $old -> $new"
	[ "$new" != "$old" ] && [ "$new" != 0 ]
	[ "$(prop lighttpd.service ActiveState)" = active ]
}

@test "stop: SIGTERM ends lighttpd, systemd records success, nothing listens" {
	systemctl stop lighttpd.service
	[ "$(prop lighttpd.service ActiveState)" = inactive ]
	[ "$(prop lighttpd.service Result)" = success ]
	run http "$URL"
	[ "$status" -ne 0 ]
	[ -z "$(named lighttpd)" ]
}

@test "a signal that kills the daemon reaches systemd through cetctl, which restarts it" {
	systemctl start lighttpd.service
	wait_for 60 serving
	n0=$(prop lighttpd.service NRestarts)
	pid=$(prop lighttpd.service MainPID)
	systemctl kill -s KILL --kill-who=main lighttpd.service
	# Debian's unit: Restart=on-failure
	restarted() { (( $(prop lighttpd.service NRestarts) > n0 )) && serving; }
	# under Bochs the restart (ExecStartPre's config test, the traced start-up, the
	# workers) takes minutes of guest time: 60 s was seen too short there
	local t0=$SECONDS
	if ! wait_for 300 restarted; then
		systemctl status lighttpd.service --no-pager -l || true
		journalctl -b -u lighttpd.service --no-pager | tail -n 30
		false
	fi
	echo "# restarted and serving after $((SECONDS - t0)) s" >&3
	journalctl -b -u lighttpd.service --no-pager | grep 'status=9/KILL' | tail -n 2
	journalctl -b -u lighttpd.service --no-pager | grep -q 'Main process exited, code=killed, status=9/KILL'
	[ "$(prop lighttpd.service MainPID)" != "$pid" ]
	systemctl stop lighttpd.service
}

# test_unit NAME COMMAND...: a oneshot unit of its own in /run/systemd/system
# (no D-Bus in this minimal system for systemd-run), started and waited for.
test_unit() {
	local name=$1
	shift
	printf '[Service]\nType=oneshot\nExecStart=%s\n' "$*" > "/run/systemd/system/$name.service"
	systemctl daemon-reload
	systemctl start "$name.service"
}

@test "a program's exit status reaches systemd through cetctl run" {
	shstk=
	has_cet && shstk=--shstk
	run test_unit cetctl-test-exit7 /usr/bin/cetctl run $shstk -- /bin/sh -c "'exit 7'"
	echo "$output"
	[ "$status" -ne 0 ]
	echo "Result=$(prop cetctl-test-exit7.service Result) status=$(prop cetctl-test-exit7.service ExecMainStatus)"
	[ "$(prop cetctl-test-exit7.service Result)" = exit-code ]
	[ "$(prop cetctl-test-exit7.service ExecMainStatus)" = 7 ]
	systemctl reset-failed cetctl-test-exit7.service
}

@test "no CET: cetctl run --shstk in a unit: systemd gets 125, the program never ran" {
	has_cet && skip "this CPU has CET"
	run test_unit cetctl-test-refused /usr/bin/cetctl run --shstk -- /usr/bin/touch /run/cetctl-test-ran
	echo "$output"
	[ "$status" -ne 0 ]
	[ "$(prop cetctl-test-refused.service ExecMainStatus)" = 125 ]
	[ ! -e /run/cetctl-test-ran ]
	systemctl reset-failed cetctl-test-refused.service
}
