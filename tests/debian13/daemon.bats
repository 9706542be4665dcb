#!/usr/bin/env bats
# A daemon as a system service under cetctl on Debian 13: trixie's nginx.service with the
# drop-in of vm/debian-guest (ExecStart=cetctl run --shstk -- nginx ...), started at boot,
# serving over loopback, its master and worker enabled and locked; restart and stop.
# And the daemon that cannot: trixie's lighttpd 1.4.79 probes each module with
# dlsym(RTLD_DEFAULT, "mod_<name>_plugin_init") first; the failed lookup unwinds inside
# the loader (_dl_catch_exception: its own setjmp/longjmp), which a glibc built without
# CET does not do for the shadow stack and which the preload library cannot reach, so
# the next return in ld.so raises a control-protection fault. (tests/debian/daemon.bats
# runs lighttpd under cetctl on Debian 12, whose lighttpd 1.4.69 does not probe.)
load lib

URL=http://127.0.0.1/

setup() {
	has_cet || skip "no CET in this CPU"
}

serving() { http "$URL" | grep -qi 'nginx'; }
master() { cat /run/nginx.pid; }
has_worker() { local w; mapfile -t w < <(children "$(master)" nginx); ((${#w[@]} >= 1)); }

@test "nginx.service runs nginx under cetctl run --shstk (drop-in), started at boot" {
	run systemctl cat nginx.service
	[[ $output == *"ExecStart=/usr/bin/cetctl run --shstk -- /usr/sbin/nginx"* ]]
	if ! wait_for 120 serving; then
		systemctl status nginx.service --no-pager -l || true
		journalctl -b -u nginx.service --no-pager | tail -n 20
		false
	fi
	[ "$(prop nginx.service ActiveState)" = active ]
	[ "$(readlink "/proc/$(master)/exe")" = /usr/sbin/nginx ]
	[ "$(prop nginx.service MainPID)" = "$(master)" ]
}

@test "nginx's master and workers are enabled and locked; audit --unit says so" {
	wait_for 120 has_worker
	mapfile -t workers < <(children "$(master)" nginx)
	echo "master $(master), workers: ${workers[*]}"
	for p in "$(master)" "${workers[@]}"; do
		grep -E $'^x86_Thread_features:\tshstk' "/proc/$p/status"
		grep -E $'^x86_Thread_features_locked:\tshstk wrss' "/proc/$p/status"
		run cetctl status "$p"
		echo "$output"
		grep -Eiq 'enabled.*locked' <<<"$output"
	done
	run cetctl audit --require shstk,locked --unit nginx
	echo "$output"
	[ "$status" -eq 0 ]
	for _ in 1 2 3; do serving; done
}

@test "nginx: restart gives a new protected master; stop ends it" {
	old=$(master)
	systemctl restart nginx.service
	wait_for 120 serving
	echo "master $old -> $(master)"
	[ "$(master)" != "$old" ]
	grep -E $'^x86_Thread_features_locked:\tshstk wrss' "/proc/$(master)/status"
	systemctl stop nginx.service
	[ "$(prop nginx.service ActiveState)" = inactive ]
	run http "$URL"
	[ "$status" -ne 0 ]
	[ -z "$(named nginx)" ]
}

@test "lighttpd 1.4.79 under cetctl run --shstk dies of a control-protection fault in ld.so" {
	expect_kernel_log 'lighttpd.* control protection .* in ld-linux-x86-64\.so\.2'
	systemctl start lighttpd.service || true
	# it dies at start; systemd restarts it until its start limit
	failed() { [ "$(prop lighttpd.service ActiveState)" = failed ]; }
	wait_for 300 failed
	echo "Result=$(prop lighttpd.service Result) status=$(prop lighttpd.service ExecMainStatus)"
	[ "$(prop lighttpd.service ExecMainCode)" = 2 ]	# CLD_KILLED
	[ "$(prop lighttpd.service ExecMainStatus)" = 11 ]	# SIGSEGV
	dmesg | grep 'lighttpd.* control protection' | tail -n 1
	dmesg | grep -q 'lighttpd.* control protection .* in ld-linux-x86-64\.so\.2'
	systemctl reset-failed lighttpd.service
}
