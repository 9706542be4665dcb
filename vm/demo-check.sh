#!/bin/bash
# vm/demo-check.sh bochs|qemu TRANSCRIPT — does the guest demo's output (vm/guest-demo.sh,
# as vm/demo.sh prints it: the lines between the CETCTL-DEMO markers) show what the demo
# claims? One line per check ("ok" or "FAILED: why") on stdout; exit 0 when all hold,
# 1 when one does not, 2 on a usage error.
#
#   bochs  the CET demo: info says supported; `run --shstk` of grep shows shadow stacks
#          enabled and locked in its own status; the return-address overwrite reaches
#          its gadget without a shadow stack and dies with SIGSEGV/SEGV_CPERR (si_code
#          10) with one, and without a handler is killed by SIGSEGV with the kernel logging
#          the control-protection fault; status and audit show the protected process "enabled and
#          locked" and the unprotected one "not enabled"; audit --require shstk,locked
#          fails (exit 1) naming the unprotected one and not the protected one;
#          map --pivot succeeds; elf --deps shows the marked program marked SHSTK and
#          the unmarked one's closure not shadow-stack ready.
#   qemu   the quick boot without CET: our kernel's interface is there (the status
#          lines), info says not supported, and run --shstk refuses (exit 125).
set -uo pipefail

usage() { echo "usage: vm/demo-check.sh bochs|qemu TRANSCRIPT" >&2; exit 2; }
(($# == 2)) || usage
mode=$1 file=$2
case $mode in bochs|qemu) ;; *) usage ;; esac
[[ -r $file ]] || { echo "demo-check: cannot read $file" >&2; exit 2; }

failed=0
check() { # description, then a command that must succeed
	local what=$1; shift
	if "$@"; then
		echo "demo-check: ok: $what"
	else
		echo "demo-check: FAILED: $what"
		failed=1
	fi
}

# block 'COMMAND': the output of the shown command (the lines after "$ COMMAND" up to
# and including its "[exit N]"); a trailing '*' matches any rest of the command line
block() {
	awk -v c="\$ $1" '
		!on && (substr(c, length(c)) == "*" ? index($0, substr(c, 1, length(c) - 1)) == 1 : $0 == c) { on = 1; next }
		on { print; if ($0 ~ /^\[exit [0-9]+\]$/) exit }' "$file"
}
# has 'COMMAND' ERE: the command's output has a line matching ERE
has() { block "$1" | grep -Eq -- "$2"; }
hasnt() { ! block "$1" | grep -Eq -- "$2"; }
exits() { block "$1" | tail -n 1 | grep -qx "\[exit $2\]"; }

if [[ $mode == qemu ]]; then
	check "the demo ran to its end" grep -q '^\$ cetctl run --shstk' "$file"
	check "info: the kernel has the x86_Thread_features lines" has "cetctl info" '^status-lines +yes'
	check "info: not supported without CET (exit 2)" exits "cetctl info" 2
	check "run --shstk refuses without CET (exit 125)" exits "cetctl run --shstk -- cat /proc/self/status" 125
	exit "$failed"
fi

check "info: supported yes" has "cetctl info" '^supported +yes'
check "info: exit 0" exits "cetctl info" 0
r="cetctl run --shstk -- grep '^x86_Thread' /proc/self/status"
check "run --shstk: grep's own status has shstk enabled" has "$r" $'^x86_Thread_features:[ \t]*shstk'
check "run --shstk: ... and locked" has "$r" $'^x86_Thread_features_locked:[ \t]*(.* )?shstk'
check "run --shstk: grep exit 0" exits "$r" 0
check "ROP without a shadow stack reaches its gadget" has "run_probe rop" 'ROP reached the gadget'
check "ROP with a shadow stack: SIGSEGV with si_code 10 (SEGV_CPERR)" \
	has "cetctl run --shstk -q -- run_probe rop" '^SEGV si_code=10$'
check "ROP with a shadow stack: the handler's exit 42" exits "cetctl run --shstk -q -- run_probe rop" 42
check "ROP with a shadow stack, no handler: killed by SIGSEGV (exit 139)" \
	exits "cetctl run --shstk -q -- run_probe rop-nohandler" 139
check "the kernel logged the control-protection fault at a near ret" \
	has "dmesg -t | grep 'control protection'" 'run_probe\[[0-9]+\] control protection .*\(near ret\)'

pids=$(sed -n 's/^# protected: PID \([0-9]*\) .*; unprotected: PID \([0-9]*\) .*/\1 \2/p' "$file")
read -r prot plain <<<"$pids"
check "the protected and unprotected PIDs are named" test -n "${prot:-}" -a -n "${plain:-}"
prot=${prot:-none} plain=${plain:-none}
for c in "cetctl status *" "cetctl audit"; do
	check "${c% \*}: PID $prot enabled and locked" has "$c" "^ *$prot .*enabled and locked"
	check "${c% \*}: PID $plain not enabled" has "$c" "^ *$plain .*not enabled"
done
q="cetctl audit --require shstk,locked"
check "audit --require shstk,locked: exit 1 (offenders)" exits "$q" 1
check "audit --require shstk,locked: lists PID $plain" has "$q" "^ *$plain "
check "audit --require shstk,locked: does not list PID $prot" hasnt "$q" "^ *$prot "
check "map --pivot: exit 0" exits "cetctl map --pivot" 0
e="cetctl elf --deps shstk_elf_marked /usr/bin/grep"
check "elf: shstk_elf_marked is marked SHSTK" has "$e" '^shstk_elf_marked +x86-64 +[a-z-]+ +(no|yes) +yes '
check "elf --deps: grep's closure is not shadow-stack ready" has "$e" '^/usr/bin/grep .* no: '
exit "$failed"
