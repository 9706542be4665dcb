#!/bin/bash
# vm/guest-demo.sh — what `vm/demo.sh` shows inside the guest (installed in the
# image as /usr/libexec/cetctl/demo.sh and run by /init when the kernel command
# line has cetctl.demo=1). Not a test: it runs cetctl the way a user would and
# prints what it says, so a reader sees the kernel series and the tool at work.
# Output is framed by CETCTL-DEMO-BEGIN / CETCTL-DEMO-END for vm/demo.sh.

helpers=${CETCTL_HELPERS:-/usr/libexec/cetctl/helpers}

show() {
	printf '\n$ %s\n' "$*"
	"$@" 2>&1
	printf '[exit %d]\n' $?
}

echo "CETCTL-DEMO-BEGIN"
printf 'kernel: %s\n' "$(uname -r)"
if grep -qw user_shstk /proc/cpuinfo; then
	echo "this CPU does user shadow stacks (cpuinfo: user_shstk)"
	hw=1
else
	echo "this CPU has no user shadow stacks: the commands below show what the"
	echo "kernel and cetctl say without hardware (boot with vm/demo.sh --bochs for CET)"
	hw=0
fi

show cetctl info
show grep '^x86_Thread_features' /proc/self/status
show cetctl elf /bin/bash "$helpers/shstk_elf_marked" "$helpers/shstk_elf_plain"
show cetctl status self
show cetctl run --shstk -- cat /proc/self/status
if [ "$hw" = 1 ]; then
	show cetctl run --shstk -- grep '^x86_Thread' /proc/self/status
	show cetctl run --shstk --wrss --no-lock -- grep '^x86_Thread' /proc/self/status
	show cetctl map --size 8192 --token
	show cetctl map --pivot
	# A program that smashes its own return address: the CPU stops it.
	[ -x "$helpers/run_probe" ] && show cetctl run --shstk -- "$helpers/run_probe" rop
fi
show cetctl audit --require shstk
echo "CETCTL-DEMO-END"
