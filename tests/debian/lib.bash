# tests/debian/lib.bash — shared by the debian tier's guest suites (tests/debian/*.bats,
# run inside the Debian guest by vm/debian-guest/run-tests). Loaded with `load lib`.

# has_cet: true in the tiers whose CPU has CET (Bochs: debian-bochs, debian13); QEMU's
# has not.
has_cet() { [[ ${CETCTL_TIER:-} == debian-bochs || ${CETCTL_TIER:-} == debian13 ]]; }

# series_kernel: the running kernel is ours (kernel-series/): its config knows the
# legacy-ELF policy's symbol, which mainline's (Debian 13's 6.12) does not.
series_kernel() {
	grep -Eq '^(# )?CONFIG_X86_USER_SHADOW_STACK_ALLOW_BROKEN[= ]' "/boot/config-$(uname -r)"
}

# expect_kernel_log ERE: kernel log lines matching ERE are provoked on purpose from now
# to the end of the suite (vm/parse-results.py reads "CETCTL-EXPECT ERE" in the log).
expect_kernel_log() { printf '<5>CETCTL-EXPECT %s\n' "$1" > /dev/kmsg; }

# HELPERS: small static programs vm/debian-image.sh builds into the image
# (tests/guest/helpers/shstk_elf.c, unmarked and marked SHSTK)
export HELPERS=/usr/libexec/cetctl-debian/helpers

# wait_for SECS CMD...: run CMD every half second until it succeeds or SECS pass.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS < end)) || return 1
		sleep 0.5
	done
}

# prop UNIT PROPERTY: systemd's value of one property.
prop() { systemctl show -P "$2" "$1"; }

# unit_settled UNIT: not (re)starting or stopping.
unit_settled() {
	local s
	s=$(prop "$1" ActiveState)
	[[ $s == active || $s == inactive || $s == failed ]]
}

# deb_path v1|v2|kernel: the packages vm/debian-image.sh left in the image.
deb_path() { echo "/var/cache/cetctl-test/$(sed -n "s/^$1=//p" /var/cache/cetctl-test/debs)"; }

# http URL: the body, failing on a refused connection or an HTTP error.
http() { curl -fsS --max-time 20 "$1"; }

# children PID [COMM]: the PIDs whose parent is PID (and whose comm is COMM), read
# from /proc/*/stat. Count what it prints in bash, not with wc: under Bochs
# coreutils' wc dies of SIGILL (status 132; its AVX2 line counting, presumably,
# AVX being off there: run-bochs.sh's clearcpuid=avx), seen with `pgrep | wc -l`.
children() {
	local st rest pid ppid comm
	for st in /proc/[0-9]*/stat; do
		{ read -r rest < "$st"; } 2>/dev/null || continue
		pid=${rest%% *}
		comm=${rest#*(}; comm=${comm%)*}
		rest=${rest##*) }
		ppid=$(cut -d' ' -f2 <<<"$rest")
		[[ $ppid == "$1" ]] || continue
		[[ -z ${2:-} || $comm == "$2" ]] && echo "$pid"
	done
	return 0
}

# named COMM: the PIDs of every process whose comm is COMM.
named() {
	local st rest comm
	for st in /proc/[0-9]*/stat; do
		{ read -r rest < "$st"; } 2>/dev/null || continue
		comm=${rest#*(}; comm=${comm%)*}
		[[ $comm == "$1" ]] && echo "${rest%% *}"
	done
	return 0
}
