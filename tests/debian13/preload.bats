#!/usr/bin/env bats
# Debian 13's glibc 2.41 has no CET code (built without --enable-cet): its longjmp leaves
# the shadow stack where it was, and it never enables shadow stacks itself. So on Debian 13
# too `cetctl run --shstk` and its preload library are the only route: the preload mends
# longjmp in trixie's dash and perl, which fault without it.
load lib

setup() {
	has_cet || skip "no CET in this CPU"
}

@test "run picks the ptrace start-up with the preload library for glibc 2.41, and says why" {
	run cetctl run --shstk -- true
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"glibc 2.41 does not manage shadow stacks: longjmp and makecontext/swapcontext are kept consistent by the preload library"* ]]
	# glibc's own route is refused, naming the reason
	run cetctl run -q --shstk --method=glibc -- true
	echo "$output"
	[ "$status" -eq 125 ]
	[[ $output == *"this is glibc 2.41, built without CET"* ]]
}

@test "dash's error path (longjmp in the shell itself) completes with the preload library" {
	run cetctl run --shstk -q -- dash -c 'cd /nonexistent-cetctl 2>/dev/null; echo after'
	echo "status $status: $output"
	[ "$status" -eq 0 ]
	[ "$output" = after ]
}

@test "perl eval/die completes with the preload library" {
	run cetctl run --shstk -q -- perl -e 'eval { die "x\n" }; print "ok $@"'
	echo "status $status: $output"
	[ "$status" -eq 0 ]
	[ "$output" = "ok x" ]
}

@test "without the preload library the same dash error path dies of a control-protection fault" {
	expect_kernel_log 'control protection|segfault'
	run bash -c 'cetctl run --shstk -q --no-preload -- dash -c "cd /nonexistent-cetctl 2>/dev/null; echo after"; echo "rc=$?"'
	echo "$output"
	[[ $output == *"rc=139"* ]]
	[[ $'\n'$output$'\n' != *$'\n'after$'\n'* ]]
	dmesg | grep 'dash.* control protection' | tail -n 1
	dmesg | grep -q 'dash.* control protection'
}

@test "without the preload library perl eval/die dies of a control-protection fault" {
	expect_kernel_log 'control protection|segfault'
	run bash -c 'cetctl run --shstk -q --no-preload -- perl -e "eval { die }; print qq(ok)"; echo "rc=$?"'
	echo "$output"
	[[ $output == *"rc=139"* ]]
	[[ $output != *okrc=* ]]
}

@test "a failed dlopen unwinds inside glibc's loader: the preload library mends it, perl goes on" {
	# ld.so catches its own errors (_dl_catch_exception) with a setjmp/longjmp of its own;
	# glibc 2.41 built without CET leaves the shadow stack behind there, and the next
	# return in ld.so faults. The library mends that one fault (ldso-unwind.c); any
	# failed dlopen or dlsym takes this path (tests/debian13/daemon.bats: lighttpd).
	run bash -c 'cetctl run --shstk -q -- perl -e "require DynaLoader; DynaLoader::dl_load_file(q(/nonexistent-cetctl.so)) and die; print qq(ok)"; echo " rc=$?"'
	echo "$output"
	[ "$output" = "ok rc=0" ]
	# without the library it dies in ld.so
	expect_kernel_log 'perl.* control protection .* in ld-linux-x86-64\.so\.2'
	run bash -c 'cetctl run --shstk -q --no-preload -- perl -e "require DynaLoader; DynaLoader::dl_load_file(q(/nonexistent-cetctl.so)); print qq(ok)"; echo "rc=$?"'
	echo "$output"
	[[ $output == *"rc=139"* ]]
	[[ $output != *okrc=* ]]
	dmesg | grep -q 'perl.* control protection .* in ld-linux-x86-64\.so\.2'
	# the same without a shadow stack: dlopen fails and perl goes on
	run perl -e 'require DynaLoader; DynaLoader::dl_load_file(q(/nonexistent-cetctl.so)) and die; print qq(ok)'
	[ "$output" = ok ]
}
