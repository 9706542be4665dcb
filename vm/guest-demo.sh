#!/bin/bash
# vm/guest-demo.sh [full|brief] — what `vm/demo.sh` shows inside the guest (installed in
# the image as /usr/libexec/cetctl/demo.sh and run by /init when the kernel command
# line has cetctl.demo=MODE). Not a test: it runs cetctl the way a user would and
# prints what it says, so a reader sees the kernel series and the tool at work;
# vm/demo-check.py then checks on the host that the output shows what it claims.
# Output is framed by CETCTL-DEMO-BEGIN / CETCTL-DEMO-END for vm/demo.sh.
#
# On a CPU with user shadow stacks (Bochs): info, `run --shstk` of a Debian program,
# a return-address overwrite without and with a shadow stack, status and audit of a
# protected and an unprotected process, map --pivot, elf --deps.
# Without (QEMU): `full` lists what cetctl and the kernel report there; `brief`
# (vm/demo.sh's quick boot before Bochs) only info and the refused launch.

mode=${1:-full}
helpers=${CETCTL_HELPERS:-/usr/libexec/cetctl/helpers}
# wide enough that no table row wraps on the serial console
export COLUMNS=160

# show 'COMMAND LINE': print it like a shell prompt, run it, print its exit status
show() {
	printf '\n$ %s\n' "$1"
	eval "$1" 2>&1
	printf '[exit %d]\n' $?
}
note() { printf '\n'; printf '# %s\n' "$@"; }

echo "CETCTL-DEMO-BEGIN"
printf 'kernel: %s\n' "$(uname -r)"
if ! grep -qw user_shstk /proc/cpuinfo; then
	echo "this CPU has no user shadow stacks: the commands below show what the"
	echo "kernel and cetctl say without hardware"
	show "cetctl info"
	if [ "$mode" != brief ]; then
		show "grep '^x86_Thread_features' /proc/self/status"
		show "cetctl elf /bin/bash $helpers/shstk_elf_marked $helpers/shstk_elf_plain"
		show "cetctl status self"
	fi
	show "cetctl run --shstk -- cat /proc/self/status"
	[ "$mode" = brief ] || show "cetctl audit --require shstk"
	echo "CETCTL-DEMO-END"
	exit 0
fi

echo "this CPU does user shadow stacks (cpuinfo: user_shstk)"
show "cetctl info"

note "A Debian program started with its shadow stack enabled and locked; it reads its own status:"
show "cetctl run --shstk -- grep '^x86_Thread' /proc/self/status"

note "A program that overwrites its own return address, without and with a shadow stack" \
	"(its SIGSEGV handler prints si_code; 10 is SEGV_CPERR, a control-protection fault):"
show "run_probe rop"
show "cetctl run --shstk -q -- run_probe rop"
note "The same without a handler: killed by SIGSEGV (exit 139), and the kernel says why:"
show "cetctl run --shstk -q -- run_probe rop-nohandler"
show "dmesg -t | grep 'control protection'"

# one protected and one unprotected process, side by side
cetctl run --shstk -q -- sleep 1000 &
prot=$!
sleep 1000 &
plain=$!
# cetctl run replaces itself with sleep once the features are enabled and locked
for _ in $(seq 40); do
	grep -qs '^x86_Thread_features_locked:.*shstk' "/proc/$prot/status" &&
		[ "$(cat "/proc/$prot/comm" 2>/dev/null)" = sleep ] && break
	sleep 0.25
done
note "protected: PID $prot (cetctl run --shstk -q -- sleep 1000); unprotected: PID $plain (sleep 1000)"
show "cetctl status $prot $plain"
show "cetctl audit"
show "cetctl audit --require shstk,locked"
kill "$prot" "$plain" 2>/dev/null
wait 2>/dev/null

note "A new shadow stack from map_shadow_stack, switched to and back with RSTORSSP:"
show "cetctl map --pivot"

note "Marked is not protected: the marking of a marked and an unmarked program, with their libraries:"
cd "$helpers" || exit 1
show "cetctl elf --deps shstk_elf_marked /usr/bin/grep"
echo "CETCTL-DEMO-END"
