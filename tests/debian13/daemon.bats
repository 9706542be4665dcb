#!/usr/bin/env bats
# A daemon as a system service under cetctl on Debian 13: trixie's nginx.service with the
# drop-in of vm/debian-guest (ExecStart=cetctl run --shstk -- nginx ...), started at boot,
# serving over loopback, its master and worker enabled and locked; restart and stop.
# And trixie's lighttpd 1.4.79, which probes each module with
# dlsym(RTLD_DEFAULT, "mod_<name>_plugin_init") first: the failed lookup unwinds inside
# the loader (_dl_catch_exception: its own setjmp/longjmp), which a glibc built without
# CET does not do for the shadow stack, and the next return in ld.so raises a
# control-protection fault. The preload library mends that fault
# (src/preload/ldso-unwind.c); without it lighttpd dies at start.
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

lighttpd_serving() { curl -fsS -o /dev/null -D - --max-time 20 "$URL" | grep -qi '^server: lighttpd'; }

@test "lighttpd 1.4.79 without the preload library dies of a control-protection fault in ld.so" {
	expect_kernel_log 'lighttpd.* control protection .* in ld-linux-x86-64\.so\.2'
	# -tt loads the modules as a start does: the failed dlsym probes
	run bash -c 'cetctl run --shstk -q --no-preload -- lighttpd -tt -f /etc/lighttpd/lighttpd.conf; echo "rc=$?"'
	echo "$output"
	[[ $output == *"rc=139"* ]]
	dmesg | grep 'lighttpd.* control protection' | tail -n 1
	dmesg | grep -q 'lighttpd.* control protection .* in ld-linux-x86-64\.so\.2'
	# with the library the same check passes
	run cetctl run --shstk -q -- lighttpd -tt -f /etc/lighttpd/lighttpd.conf
	echo "with the library: $status: $output"
	[ "$status" -eq 0 ]
}

@test "lighttpd.service under cetctl run --shstk: the loader's unwinding mended, it serves, enabled and locked" {
	# port 80 is nginx's until its test stopped it
	[ "$(prop nginx.service ActiveState)" = inactive ] || systemctl stop nginx.service
	local before pid
	before=$(dmesg | grep -c 'lighttpd.* control protection' || true)
	systemctl start lighttpd.service
	if ! wait_for 120 lighttpd_serving; then
		systemctl status lighttpd.service --no-pager -l || true
		journalctl -b -u lighttpd.service --no-pager | tail -n 20
		false
	fi
	pid=$(prop lighttpd.service MainPID)
	[ "$(readlink "/proc/$pid/exe")" = /usr/sbin/lighttpd ]
	grep -E $'^x86_Thread_features:\tshstk' "/proc/$pid/status"
	grep -E $'^x86_Thread_features_locked:\tshstk' "/proc/$pid/status"
	for _ in 1 2 3; do lighttpd_serving; done
	[ "$(prop lighttpd.service NRestarts)" = 0 ]
	[ "$(dmesg | grep -c 'lighttpd.* control protection' || true)" = "$before" ]
	systemctl stop lighttpd.service
	[ "$(prop lighttpd.service ActiveState)" = inactive ]
}
