#!/usr/bin/env bats
# cetctl info: recorded trees (cet-emulated = host recording with CET
# switched on in cpuinfo/config/status, see derive-cet-fixtures.py), edited
# copies made here for single facts, and the live host.

setup_file() {
	export CETCTL="${CETCTL:-$BATS_TEST_DIRNAME/../../build/cetctl}"
	export FIX="$BATS_TEST_DIRNAME/fixtures/proc"
}

setup() {
	[ -x "$CETCTL" ] || skip "cetctl not built at $CETCTL"
}

jqs() {	# jqs TEXT [jq args] FILTER: jq -e on TEXT, which must hold JSON
	# (jq 1.6 exits 0 on empty input, so an empty output would pass)
	local in=$1; shift
	[[ $in == *[\{\[]* ]] || { echo "no JSON in: '$in'"; return 1; }
	printf '%s\n' "$in" | jq -e "$@"
}

value() {	# value JSON NAME
	echo "$1" | jq -r --arg n "$2" '.info[] | select(.name == $n) | .value'
}

copy_tree() {	# copy_tree TREE -> path of a private copy
	cp -a "$FIX/$1" "$BATS_TEST_TMPDIR/$1"
	echo "$BATS_TEST_TMPDIR/$1"
}

@test "info: CET-capable system (recorded, edited): exit 0 and every link yes" {
	run "$CETCTL" --proc-root "$FIX/cet-emulated" info -J
	[ "$status" -eq 0 ]
	[ "$(value "$output" cpu-shstk)" = yes ]
	[ "$(value "$output" cpu-ibt)" = yes ]
	[ "$(value "$output" cpu-user-shstk)" = yes ]
	[ "$(value "$output" kernel-config)" = yes ]
	[ "$(value "$output" status-lines)" = yes ]
	[ "$(value "$output" clearcpuid)" = "avx,fsrm" ]
	[ "$(value "$output" legacy-elf)" = block ]
	[ "$(value "$output" supported)" = yes ]
}

@test "info: this host's recording (no CET kernel): exit 2, says why" {
	run "$CETCTL" --proc-root "$FIX/host-nocet" info -J
	[ "$status" -eq 2 ]
	[ "$(value "$output" status-lines)" = no ]
	[ "$(value "$output" kernel-config)" = no ]
	[ "$(value "$output" legacy-elf)" = none ]
	[ "$(value "$output" supported)" = no ]
	jqs "$output" '.info[] | select(.name == "supported") | .detail | startswith("kernel has no shadow-stack support")'
}

@test "info: not an x86 CPU (arm64 cpuinfo): exit 2" {
	run "$CETCTL" --proc-root "$FIX/arm64-ss" info -J
	[ "$status" -eq 2 ]
	jqs "$output" '.info[] | select(.name == "supported") | .detail == "not an x86 CPU"'
}

@test "info: clearcpuid=shstk on the command line: exit 2, blamed on it" {
	t=$(copy_tree cet-emulated)
	printf 'console=ttyS0 clearcpuid=avx,user_shstk quiet\n' > "$t/cmdline"
	run "$CETCTL" --proc-root "$t" info -J
	[ "$status" -eq 2 ]
	[ "$(value "$output" clearcpuid)" = "avx,user_shstk" ]
	jqs "$output" '.info[] | select(.name == "supported") | .detail | test("clearcpuid")'
}

@test "info: parameters after -- belong to init and are ignored" {
	t=$(copy_tree cet-emulated)
	printf 'console=ttyS0 -- clearcpuid=shstk\n' > "$t/cmdline"
	run "$CETCTL" --proc-root "$t" info -J
	[ "$status" -eq 0 ]
	[ "$(value "$output" clearcpuid)" = none ]
}

@test "info: CPU has shstk but the kernel does not use it (no user_shstk): exit 2" {
	t=$(copy_tree cet-emulated)
	sed -i 's/ user_shstk//' "$t/cpuinfo"
	run "$CETCTL" --proc-root "$t" info -J
	[ "$status" -eq 2 ]
	[ "$(value "$output" cpu-shstk)" = yes ]
	[ "$(value "$output" cpu-user-shstk)" = no ]
	jqs "$output" '.info[] | select(.name == "supported") | .detail | test("lacks user_shstk")'
}

@test "info: legacy-ELF policy: Kconfig ALLOW_BROKEN, then the boot parameter overrides" {
	t=$(copy_tree cet-emulated)
	rm "$t/config.gz"
	# plain config: the recorded-tree fallback
	printf 'CONFIG_X86_USER_SHADOW_STACK=y\nCONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN=y\n' > "$t/config"
	run "$CETCTL" --proc-root "$t" info -J
	[ "$status" -eq 0 ]
	[ "$(value "$output" legacy-elf)" = allow ]
	jqs "$output" '.info[] | select(.name == "kernel-config") | .detail | test("/config\\)$")'
	printf 'quiet shstk_legacy_elf=block\n' > "$t/cmdline"
	run "$CETCTL" --proc-root "$t" info -J
	[ "$(value "$output" legacy-elf)" = block ]
	jqs "$output" '.info[] | select(.name == "legacy-elf") | .detail | test("shstk_legacy_elf=block")'
	printf 'CONFIG_X86_USER_SHADOW_STACK=y\n# CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN is not set\n' > "$t/config"
	printf 'quiet shstk_legacy_elf=allow\n' > "$t/cmdline"
	run "$CETCTL" --proc-root "$t" info -J
	[ "$(value "$output" legacy-elf)" = allow ]
}

@test "info: no kernel config anywhere: kernel-config unknown, still decided by the status lines" {
	t=$(copy_tree cet-emulated)
	rm "$t/config.gz"
	run "$CETCTL" --proc-root "$t" info -J
	[ "$status" -eq 0 ]
	[ "$(value "$output" kernel-config)" = unknown ]
	[ "$(value "$output" legacy-elf)" = unknown ]
}

@test "info: an empty tree: nothing readable, exit 1" {
	mkdir "$BATS_TEST_TMPDIR/empty"
	run "$CETCTL" --proc-root "$BATS_TEST_TMPDIR/empty" info
	[ "$status" -eq 1 ]
	[[ "$output" == *"cannot read"*cpuinfo* ]]
}

@test "info (live): exit code matches the supported row; glibc is the one installed" {
	rc=0
	"$CETCTL" info -J > "$BATS_TEST_TMPDIR/info.json" || rc=$?
	out=$(cat "$BATS_TEST_TMPDIR/info.json")
	case "$(value "$out" supported)" in
	yes) [ "$rc" -eq 0 ] ;;
	no) [ "$rc" -eq 2 ] ;;
	*) false ;;
	esac
	[ "$(value "$out" glibc)" = "$(getconf GNU_LIBC_VERSION | awk '{ print $2 }')" ]
	# the CPU flags agree with /proc/cpuinfo
	if grep -qw user_shstk /proc/cpuinfo; then want=yes; else want=no; fi
	[ "$(value "$out" cpu-user-shstk)" = "$want" ]
	if grep -q '^x86_Thread_features:' /proc/self/status; then want=yes; else want=no; fi
	[ "$(value "$out" status-lines)" = "$want" ]
}

@test "info (live): kernel-config agrees with the kernel's own config" {
	if [ -r /proc/config.gz ]; then
		cfg=$(zcat /proc/config.gz)
	elif [ -r "/boot/config-$(uname -r)" ]; then
		cfg=$(cat "/boot/config-$(uname -r)")
	else
		skip "no /proc/config.gz or /boot/config-$(uname -r) on this host"
	fi
	if echo "$cfg" | grep -qx 'CONFIG_X86_USER_SHADOW_STACK=y'; then want=yes; else want=no; fi
	run "$CETCTL" info -J
	[ "$(value "$output" kernel-config)" = "$want" ]
}

@test "info: glibc 2.36 cannot enable shadow stacks itself, >= 2.39 built with CET can" {
	run "$CETCTL" info -J -o NAME,VALUE
	v=$(value "$output" glibc)
	can=$(value "$output" glibc-can-enable)
	libc=$(ldd "$CETCTL" | awk '$1 == "libc.so.6" { print $3 }')
	marked=$("$CETCTL" elf -n --raw -o SHSTK "$libc" 2>/dev/null)
	if [ "$(printf '%s\n2.39\n' "$v" | sort -V | head -1)" = 2.39 ] && [ "$marked" = yes ]; then
		[ "$can" = yes ]
	else
		[ "$can" = no ]
	fi
}

@test "info: -o, -n, --raw, --list-columns and usage errors" {
	run "$CETCTL" --proc-root "$FIX/cet-emulated" info -n --raw -o NAME,VALUE
	[ "$status" -eq 0 ]
	[[ "$output" == *"supported yes"* ]]
	[[ "$output" != *DETAIL* ]]
	run "$CETCTL" info --list-columns
	[ "$status" -eq 0 ]
	[[ "$output" == *DETAIL* ]]
	run "$CETCTL" info extra
	[ "$status" -eq 1 ]
	[[ "$output" == *"Try 'cetctl info --help'"* ]]
	run "$CETCTL" info -o NOPE
	[ "$status" -eq 1 ]
}

@test "info: DETAIL says what VALUE says: a \"no\" row never reads as yes" {
	# host-nocet: no shstk, ibt or user_shstk in cpuinfo, no status lines,
	# kernel config without CONFIG_X86_USER_SHADOW_STACK
	run "$CETCTL" --proc-root "$FIX/host-nocet" info -J
	echo "$output"
	d() { jq -r --arg n "$1" '.info[] | select(.name == $n) | "\(.value)|\(.detail)"' <<<"$output"; }
	[ "$(d cpu-shstk)" = "no|the CPU has no shadow stacks: cpuinfo lacks shstk and user_shstk" ]
	[ "$(d cpu-ibt)" = "no|cpuinfo lacks ibt: no indirect branch tracking" ]
	[ "$(d cpu-user-shstk)" = "no|cpuinfo lacks user_shstk: the kernel does not run user shadow stacks on this CPU" ]
	[[ "$(d kernel-config)" == "no|CONFIG_X86_USER_SHADOW_STACK is not set ("*")" ]]
	[ "$(d status-lines)" = "no|no x86_Thread_features line in $FIX/host-nocet/self/status" ]
	# and the "yes" rows say yes
	run "$CETCTL" --proc-root "$FIX/cet-emulated" info -J
	[ "$(d cpu-shstk)" = "yes|the CPU has shadow stacks: cpuinfo flag shstk" ]
	[ "$(d cpu-user-shstk)" = "yes|cpuinfo flag user_shstk: the kernel runs user shadow stacks on this CPU" ]
	[[ "$(d kernel-config)" == "yes|CONFIG_X86_USER_SHADOW_STACK=y ("*")" ]]
	[ "$(d status-lines)" = "yes|x86_Thread_features lines in $FIX/cet-emulated/self/status" ]
}
