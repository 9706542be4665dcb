#!/usr/bin/env bats
# Trixie's qemu-img (package qemu-utils) runs its block layer in coroutines: makecontext
# and swapcontext start one, sigsetjmp/siglongjmp switch between them (QEMU's
# coroutine-ucontext.c). Debian 13's glibc 2.41 is built without CET: its swapcontext
# never switches shadow stacks. Under `cetctl run --shstk` the preload library gives
# each context a shadow stack of its own and keeps longjmp consistent; without it the
# same program dies of a control-protection fault. Debian's own binary, real work.
load lib

setup() {
	has_cet || skip "no CET in this CPU"
	command -v qemu-img >/dev/null || fail "qemu-img not in the image (package qemu-utils)"
	D=$BATS_TEST_TMPDIR
}

@test "qemu-img's verdict names its ucontext switches, covered by the preload library" {
	# the verdict is the worst finding (glib's PCRE2 JIT: unknown); the ucontext
	# calls of qemu-img itself are among the findings, mended by the library
	run cetctl elf --compat --json /usr/bin/qemu-img
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *'"verdict": "switches-covered","object": "/usr/bin/qemu-img","match": "swapcontext"'*'"cover": "preload"'* ]]
	[[ $output == *'"verdict": "switches-covered","object": "/usr/bin/qemu-img","match": "makecontext"'* ]]
}

@test "qemu-img create, convert and check a qcow2 image under run --shstk" {
	run cetctl run --shstk -q -- qemu-img create -f qcow2 "$D/a.qcow2" 8M
	echo "create: $status: $output"
	[ "$status" -eq 0 ]
	printf 'cetctl-%04d\n' $(seq 1 300) > "$D/data"
	run cetctl run --shstk -q -- qemu-img convert -f raw -O qcow2 "$D/data" "$D/b.qcow2"
	echo "convert raw->qcow2: $status: $output"
	[ "$status" -eq 0 ]
	run cetctl run --shstk -q -- qemu-img convert -f qcow2 -O raw "$D/b.qcow2" "$D/back"
	echo "convert qcow2->raw: $status: $output"
	[ "$status" -eq 0 ]
	cmp -n "$(stat -c %s "$D/data")" "$D/data" "$D/back"
	run cetctl run --shstk -q -- qemu-img check "$D/b.qcow2"
	echo "check: $status: $output"
	[ "$status" -eq 0 ]
	[[ $output == *"No errors were found on the image."* ]]
}

@test "qemu-img under run --shstk runs with a shadow stack, enabled and locked" {
	# held in its open() of a FIFO until a writer comes, it is looked at from outside
	mkfifo "$D/fifo"
	cetctl run --shstk -q -- qemu-img info -f raw "$D/fifo" > "$D/info" 2>&1 &
	local pid=$! st=''
	for _ in $(seq 300); do
		[[ $(cat "/proc/$pid/comm" 2>/dev/null) == qemu-img ]] &&
			st=$(grep '^x86_Thread_features' "/proc/$pid/status") && break
		sleep 0.1
	done
	echo "$st"
	# a writer opens and closes it: qemu-img goes on (bounded: it may be gone)
	timeout 30 bash -c ': > "$0"' "$D/fifo" || true
	local rc=0
	wait "$pid" || rc=$?
	echo "qemu-img info: $rc: $(cat "$D/info")"
	[[ $st == *$'x86_Thread_features:\tshstk '* ]]
	[[ $st == *$'x86_Thread_features_locked:\tshstk '* ]]
	[ "$rc" -ne 139 ]
}

@test "without the preload library the same qemu-img dies of a control-protection fault" {
	expect_kernel_log 'qemu-img.* control protection|segfault'
	run cetctl run --shstk -q -- qemu-img create -f qcow2 "$D/c.qcow2" 1M
	[ "$status" -eq 0 ]
	run bash -c 'cetctl run --shstk -q --no-preload -- qemu-img check "$0"; echo "rc=$?"' "$D/c.qcow2"
	echo "$output"
	[[ $output == *"rc=139"* ]]
	dmesg | grep 'qemu-img.* control protection' | tail -n 1
	dmesg | grep -q 'qemu-img.* control protection'
	# and plainly, without a shadow stack, it works
	run qemu-img check "$D/c.qcow2"
	[ "$status" -eq 0 ]
}
