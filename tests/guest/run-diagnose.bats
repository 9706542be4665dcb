#!/usr/bin/env bats
# cetctl run --shstk and a control-protection fault (issue 31, part 4): the
# preload library says, in one message on stderr, where the fault was, what
# the stack and the shadow stack held, and the likely class by evidence; the
# program still dies of SIGSEGV (139 in a shell). And the compatibility
# verdict (part 3) on a system with shadow stacks: a Go-marked program is
# refused, --force-incompatible runs it.
#  QEMU (no CET in the CPU): everything here skips but the refusal, which
#    comes before the check of the CPU.
#  Bochs (emulated CET): all of it.
# Helper: run_cpfault (dynamic, tests/guest/helpers/run_cpfault.c); the ELF
# fixtures of the host tier (compat/go-note: a C program with Go's build-ID
# note), built for /usr/libexec/cetctl/fixtures.

bats_require_minimum_version 1.5.0
load lib/common

# (no jq in the guest image: the text output is checked)

setup() {
	CETCTL=${CETCTL:-$(command -v cetctl || echo "$BATS_TEST_DIRNAME/../../build/cetctl")}
	[[ -x $CETCTL ]] || fail "no cetctl binary"
	CPF=$HELPERS/run_cpfault
	[[ -x $CPF ]] || fail "helper $CPF missing"
	FIX=${CETCTL_FIXTURES:-/usr/libexec/cetctl/fixtures}
	find_preload
	ulimit -c 0
}

# faulted MODE: run_cpfault MODE under run --shstk; $output: its stderr and
# stdout, then "rc=N" as a shell saw it
faulted() {
	expect_fault_lines
	run bash -c '"$0" run --shstk -q -- "$1" "$2" 2>&1; echo "rc=$?"' "$CETCTL" "$CPF" "$1"
	echo "$output"
}

# has TEXT: a line of the output holds TEXT
has() {
	[[ $output == *"$1"* ]] || fail "missing: $1"
}

# the diagnosis, once, in the process named
one_diagnosis() {
	local n
	n=$(grep -c 'libcetctl-preload: control-protection fault (SIGSEGV, SEGV_CPERR) in process' <<<"$output")
	[[ $n -eq 1 ]] || fail "$n diagnoses"
}

@test "diagnose: a corrupted return: object and symbol of the fault, the return and the expected" {
	need_preload_hw
	# without a shadow stack the corruption really lands
	run "$CPF" ret
	[[ $status -eq 0 && $output == survived ]] || fail "the corruption itself is broken: $output"
	faulted ret
	has "rc=139"
	[[ $output != *survived* ]] || fail "landed"
	one_diagnosis
	has "  at           0x"
	has "$CPF (smash+0x"
	has "  returning to 0x"
	has "$CPF (landing+0x0) (on the stack at 0x"
	has "  expected     0x"
	has "$CPF (do_ret+0x"
	has "(on the shadow stack at 0x"
	has "  likely:      unknown: no evidence of a stack switch, a non-local jump or generated code"
}

@test "diagnose: a longjmp the preload did not see (glibc's own): a non-local jump" {
	need_preload_hw
	faulted longjmp
	has "rc=139"
	one_diagnosis
	# jumper()'s return faults: it tried its real return point, which the
	# shadow stack holds further up, under the frames the jump skipped
	has "$CPF (jumper+0x"
	has "  returning to 0x"
	has "$CPF (do_longjmp+0x"
	has "  expected     0x"
	has "libc.so.6 ("
	has "likely:      non-local jump (longjmp, or a switch back to an earlier context): the shadow stack holds the return address"
	has "further up; it was not unwound"
}

@test "diagnose: code in an anonymous executable mapping: generated code (JIT)" {
	need_preload_hw
	faulted jit
	has "rc=139"
	one_diagnosis
	has "(anonymous executable mapping)"
	has "  returning to 0x"
	has "(landing+0x0)"
	has "$CPF (do_jit+0x"
	has "likely:      generated code (JIT): the faulting code is in an anonymous executable mapping"
}

@test "diagnose: a return on another stack: a stack switch" {
	need_preload_hw
	faulted switch
	has "rc=139"
	one_diagnosis
	has "$CPF (switch_to+0x"
	has "(landing+0x0)"
	has "likely:      stack switch: the stack pointer 0x"
	has "is outside this thread's stack"
}

@test "diagnose: in a thread: its own stack is no stack switch" {
	need_preload_hw
	faulted thread
	has "rc=139"
	one_diagnosis
	local pid tid
	read -r pid tid < <(sed -nE 's/.* in process ([0-9]+), thread ([0-9]+):$/\1 \2/p' <<<"$output")
	[[ -n $pid && $pid != "$tid" ]] || fail "thread not named: $pid $tid"
	has "$CPF (do_ret+0x"
	has "likely:      unknown:"
}

@test "diagnose: a fork child dies of it and names itself; the parent goes on" {
	need_preload_hw
	faulted fork
	has "rc=0"
	local child
	child=$(sed -nE 's/^child ([0-9]+): signal 11$/\1/p' <<<"$output")
	[[ -n $child ]] || fail "the child did not die of SIGSEGV"
	has "in process $child, thread $child:"
	one_diagnosis
}

@test "diagnose: the program's own SIGSEGV handler runs after the diagnosis; without the preload, no word" {
	need_preload_hw
	expect_fault_lines
	# before cpfault-chain.c: "own handler" alone, the fault unexplained
	run bash -c '"$0" run --shstk -q -- "$1" handler 2>&1; echo "rc=$?"' "$CETCTL" "$CPF"
	echo "$output"
	has "rc=42"
	one_diagnosis
	[[ ${lines[-2]} == "own handler" ]] || fail "the program's handler did not run last"
	run bash -c '"$0" run --shstk -q -- "$1" handler-info 2>&1; echo "rc=$?"' "$CETCTL" "$CPF"
	echo "$output"
	has "rc=42"
	one_diagnosis
	[[ ${lines[-2]} == "own handler si_code=10" ]] || fail "the handler did not get SEGV_CPERR"
	run bash -c '"$0" run --shstk -q --no-preload -- "$1" ret 2>&1; echo "rc=$?"' "$CETCTL" "$CPF"
	echo "$output"
	has "rc=139"
	[[ $output != *control-protection* ]] || fail "a diagnosis without the library"
}

@test "diagnose: the program dies of SIGSEGV itself, as a parent sees it" {
	need_preload_hw
	expect_fault_lines
	run perl -e 'system(@ARGV); print(($? & 127) ? "signal " . ($? & 127) : "exit " . ($? >> 8))' \
		-- "$CETCTL" run --shstk -q -- "$CPF" ret
	echo "$output"
	[[ ${lines[-1]} == "signal 11" ]] || fail "not killed by SIGSEGV"
}

@test "compat: run --shstk refuses a Go-marked program before it runs; --force-incompatible runs it" {
	local go=$FIX/compat/go-note
	[[ -x $go ]] || fail "no fixture $go (vm/mkinitramfs.sh copies build/tests/guest-fixtures)"
	run "$CETCTL" run --shstk -- "$go" /tmp/cetctl-go-started
	echo "$output"
	[[ $status -eq 125 ]] || fail "status $status"
	has "refusing to run $go: incompatible: Go runtime"
	[[ ! -e /tmp/cetctl-go-started ]] || fail "it ran"
	need_preload_hw
	run "$CETCTL" run --shstk --force-incompatible -- "$go" /tmp/cetctl-go-started
	echo "$output"
	[[ $status -eq 0 && -e /tmp/cetctl-go-started ]] || fail "forced: status $status"
	has "running it all the same (--force-incompatible)"
	rm -f /tmp/cetctl-go-started
}
