#!/usr/bin/env bats
# The dynamic loader's own error unwinding under `cetctl run --shstk`: a failed
# dlopen() or dlsym() is reported by a longjmp inside ld.so, which Debian's glibc
# (built without CET) does not follow on the shadow stack; the `ret` of
# _dl_catch_exception() then faults. The preload library mends that one fault
# (src/preload/ldso-unwind.c): the program goes on, as a CET glibc's would.
#  QEMU (no CET in the CPU): everything skips, saying so.
#  Bochs (emulated CET): all of it.
# Helper: ldso_fail (dynamic, tests/guest/helpers/ldso_fail.c).

bats_require_minimum_version 1.5.0
load lib/common

setup() {
	CETCTL=${CETCTL:-$(command -v cetctl || echo "$BATS_TEST_DIRNAME/../../build/cetctl")}
	[[ -x $CETCTL ]] || fail "no cetctl binary"
	LF=$HELPERS/ldso_fail
	[[ -x $LF ]] || fail "helper $LF missing"
	find_preload
	ulimit -c 0
}

# lf MODE N: ldso_fail under run --shstk with the library; stderr with stdout
lf() {
	run bash -c '"$0" run --shstk -q -- "$1" "$2" "$3" 2>&1; echo "rc=$?"' "$CETCTL" "$LF" "$1" "$2"
	printf '%s\n' "$output"
}

ERR="err=/nonexistent-cetctl/libnone-cetctl.so: cannot open shared object file: No such file or directory"

@test "ldso: without the preload library a failed dlopen dies in glibc's unwinding (control-protection fault)" {
	need_preload_hw
	expect_fault_lines
	run bash -c '"$0" run --shstk -q --no-preload -- "$1" main 1 2>&1; echo "rc=$?"' "$CETCTL" "$LF"
	printf '%s\n' "$output"
	[[ $output == *"rc=139"* ]] || fail "expected SIGSEGV"
	dmesg | grep 'ldso_fail.* control protection' | tail -n 1
	# glibc 2.36: libc's own copy of the loader's _dl_catch_exception
	dmesg | grep -Eq 'ldso_fail.* control protection .* in (libc\.so\.6|ld-linux-x86-64\.so\.2)' ||
		fail "no control-protection fault in libc or ld.so in the kernel log"
}

@test "ldso: 300 failed dlopen/dlsym rounds complete, registers kept, the shadow stack where it was" {
	need_preload_hw
	lf main 300
	[[ $output == *"main: ok rounds=300 ssp=same $ERR"* ]] || fail "output"
	[[ $output == *"rc=0"* ]] || fail "status"
	[[ $output != *libcetctl-preload:* ]] || fail "a diagnosis was said"
}

@test "ldso: the same in a second thread" {
	need_preload_hw
	lf thread 100
	[[ $output == *"thread: ok rounds=100 ssp=same $ERR"* && $output == *"rc=0"* ]] || fail "thread"
}

@test "ldso: the program's own SIGSEGV handler never sees the mended fault, and stays installed" {
	need_preload_hw
	lf handler 100
	[[ $output != *"own handler called"* ]] || fail "the program's handler ran"
	[[ $output == *"handler: ok rounds=100 ssp=same $ERR"* && $output == *"rc=0"* ]] || fail "handler"
}

@test "ldso: perl's DynaLoader of a missing library fails and perl goes on" {
	need_preload_hw
	command -v perl >/dev/null || skip "no perl in the image"
	run bash -c '"$0" run --shstk -q -- perl -e "require DynaLoader;
		DynaLoader::dl_load_file(q(/nonexistent-cetctl.so)) and die; print qq(ok)" 2>&1; echo " rc=$?"' "$CETCTL"
	printf '%s\n' "$output"
	[[ $output == "ok rc=0" ]] || fail "perl"
}

@test "ldso: a control-protection fault elsewhere still dies, with the diagnosis" {
	need_preload_hw
	expect_fault_lines
	# the mending is for the loader's one `ret` only: glibc's own longjmp in
	# the program (run_cpfault's longjmp mode) is not mended here
	[[ -x $HELPERS/run_cpfault ]] || fail "helper run_cpfault missing"
	run bash -c '"$0" run --shstk -q -- "$1" ret 2>&1; echo "rc=$?"' "$CETCTL" "$HELPERS/run_cpfault"
	printf '%s\n' "$output"
	[[ $output == *"rc=139"* ]] || fail "expected SIGSEGV"
	[[ $output == *"libcetctl-preload: control-protection fault"* ]] || fail "no diagnosis"
	[[ $output != *survived* ]] || fail "it survived"
}
