#!/usr/bin/env bash
# Run every test tier of cetctl, from a fresh Debian 12 machine:
#
#   bash tests/run-all.sh            all tiers: host, asan, fuzz, qemu, kselftest, bochs, debian
#   bash tests/run-all.sh host       only the host tier (no kernel build)
#   bash tests/run-all.sh host qemu  any subset, in that order
#
# Tiers: host   C unit tests (ctest) and bats tests of cetctl on this machine
#        asan   the same under ASan+UBSan (build-asan/). When the bochs tier follows,
#               it runs alongside that tier (Bochs emulates on one core; the
#               machine has two), its output printed when the bochs tier is done:
#               about 12 min less wall time. CETCTL_ASAN_ALONGSIDE=0 runs it in turn.
#        fuzz   a bounded libFuzzer run of the parsers (clang, build-fuzz/)
#        qemu   our kernel in QEMU: the guest suites, hardware cases skip
#        kselftest  the 6.1 tree's x86 and vm selftests in QEMU on unpatched 6.1
#               and on our kernel (same config); a test that passes on 6.1 and
#               fails on ours is a failure
#        bochs  our kernel in Bochs with emulated CET: every guest suite runs,
#               the shadow-stack fuzzer for 3 x 30 s (CETCTL_FUZZ_SHSTK=1: its
#               long run, kernel argument cetctl.fuzz=1; README "Long runs"), then
#               short boots of their own: nousershstk, and CRIU 4.2 (vm/build-criu.sh)
#               dumping and restoring shadow-stack processes (tests/guest/criu.bats),
#               and, when vm/build-glibc-cet.sh's CET glibc is cached (or with
#               CETCTL_GLIBC_CET=1, which builds it: a long build), why glibc leaves
#               shadow stacks off (tests/guest/glibc-cet.bats).
#               One CPU: tests/guest/smp.bats skips ("1 CPU online"). CETCTL_BOCHS_SMP=1
#               adds the 2-CPU soak, a boot of its own (--cpus 2: smp, conformance-flow,
#               fuzz-shstk; ~25 min wall measured, vm/bochs/README.md "SMP")
#        debian a Debian 12 system in the guest (run_debian below): systemd, node_exporter,
#               lighttpd under cetctl, the cetctl .deb upgraded and purged (tests/debian/)
#        debian13  opt-in, not in the default list: a Debian 13 (trixie) system on Debian
#               13's own kernel (6.12, Debian's config, no series of ours) in Bochs with
#               emulated CET (run_debian13 below, vm/debian13/README.md): cetctl's
#               commands on real processes, lighttpd under run --shstk, the preload
#               library with glibc 2.41, the kernel ABI differences (tests/debian13/).
#               Time: the kernel's first build is hours on 2 cores (Debian's whole
#               vmlinux with DEBUG_INFO/BTF; cached, then seconds); the image ~10-25 min
#               on a loaded machine (once per input); the boot to systemd ~7 min wall in
#               Bochs, the suites ~1-2 min each (vm/debian13/README.md "Figures")
#        world  opt-in, not in the default list: the world corpus (tests/world/, run_world
#               below), 37 workloads of 33 Debian programs, each plainly and under
#               `cetctl run --shstk`, in Bochs on a Debian root of their packages with an
#               init of its own; the table and the goal's figures (vm/world.py) in
#               build/artifacts/world.{md,tsv,json}. Measured on a shared, loaded 2-core
#               host (README "Real programs"): image 576 s (mmdebstrap) + 286 s (the cetctl
#               .debs, shared with debian) + 29 s; boot to its init 44 s; the corpus in two
#               halves of 2053 s and 1821 s wall (335 s of Bochs CPU time for the first).
#               The default bochs tier runs the corpus's subset: tests/guest/corpus.bats
#
# It installs the Debian packages it needs (vm/install-deps.sh), builds
# cetctl and its tests, builds our kernel from linux-source-6.1 plus
# kernel-series/ (cached under ${CETCTL_CACHE:-~/.cache/cetctl}), boots it and
# runs the guest suites. Each tier prints "TIER: N passed, N failed, N skipped";
# the last line adds them up. The exit status is non-zero when any test
# failed or any tier could not run.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

tiers=("$@")
[ ${#tiers[@]} -gt 0 ] || tiers=(host asan fuzz qemu kselftest bochs debian)
for t in "${tiers[@]}"; do
	case "$t" in
	host|asan|qemu|kselftest|bochs|fuzz|debian|debian13|world) ;;
	*) echo "run-all: unknown tier '$t' (host, asan, fuzz, qemu, kselftest, bochs, debian, debian13, world)" >&2; exit 1 ;;
	esac
done

build=${CETCTL_BUILD:-$top/build}
artifacts=$build/artifacts

# trusted_dir DIR: DIR (or, while it does not exist, its nearest existing
# parent) and every directory above it are owned by root or by us and not
# writable by group or others: the rule cetctl applies to its preload library
# (src/run-env.c, trusted_file).
trusted_dir() {
	local d=$1 st
	while [ ! -e "$d" ]; do d=$(dirname "$d"); done
	d=$(realpath -e "$d") || return 1
	while :; do
		st=$(stat -c '%u %a' "$d") || return 1
		[ "${st% *}" = 0 ] || [ "${st% *}" = "$(id -u)" ] || return 1
		(( (8#${st#* } & 8#022) == 0 )) || return 1
		[ "$d" = / ] && return 0
		d=$(dirname "$d")
	done
}

# A checkout under /tmp or /var/tmp (or any directory others can write) puts
# the build where cetctl rightly refuses its preload library, and every test
# of `run` would skip. The binaries under test are then built in a stage of
# our own, /var/lib/cetctl-test/<hash of the checkout's path>/, root's and
# 0755; the logs stay in the checkout. Stages of checkouts that are gone are
# removed.
if ! trusted_dir "$build"; then
	stage_root=/var/lib/cetctl-test
	if [ "$(id -u)" -eq 0 ] && (umask 022 && mkdir -p "$stage_root") && trusted_dir "$stage_root"; then
		for old in "$stage_root"/*/checkout; do
			[ -f "$old" ] || continue
			[ -d "$(cat "$old")" ] || rm -rf "$(dirname "$old")"
		done
		stage=$stage_root/$(printf '%s' "$top" | sha256sum | cut -c1-12)
		(umask 022 && mkdir -p "$stage") && printf '%s\n' "$top" >"$stage/checkout"
		echo "run-all: $build is writable by others above it (cetctl would refuse its preload library there); building in $stage/build"
		build=$stage/build
		mkdir -p "$artifacts"
	else
		echo "run-all: warning: $build is writable by others above it and no root-owned stage could be made: the tests of 'run' will skip (move the checkout)" >&2
	fi
fi
total_pass=0 total_fail=0 total_skip=0
broken=()
summary=()
t_start=$SECONDS

log() { printf '\n==> %s\n' "$*"; }

# add_counts TIER PASS FAIL SKIP
add_counts() {
	summary+=("$(printf '%-6s %s passed, %s failed, %s skipped' "$1:" "$2" "$3" "$4")")
	total_pass=$((total_pass + $2))
	total_fail=$((total_fail + $3))
	total_skip=$((total_skip + $4))
}

# counts KIND FILE: "PASS FAIL SKIP" as vm/results.py reads it from FILE (KIND tap,
# ctest, fuzz or summary); nothing when FILE holds no such result, which the callers
# count as a broken tier, never as a passed one.
counts() {
	python3 vm/results.py "$1" "$2" 2>/dev/null
}

log "Installing build and test dependencies"
if ! bash vm/install-deps.sh; then
	echo "run-all: installing dependencies failed" >&2
	exit 1
fi

log "Building cetctl"
if ! { cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
       cmake --build "$build" -j"$(nproc)"; }; then
	echo "run-all: building cetctl failed" >&2
	exit 1
fi
mkdir -p "$artifacts"

# ctest_counts LOG TIER: sets cp and cf (passed, failed) from ctest's last
# line; a log without it makes the run broken. Not in a subshell: it appends
# to broken.
ctest_counts() {
	local s
	cp=0 cf=0
	if ! read -r cp cf s < <(counts ctest "$1"); then
		cp=0 cf=0
		broken+=("$2: ctest did not report (see $1)")
	fi
}

run_host() {
	local tap=$artifacts/host.tap ct=$artifacts/host-ctest.log
	local p f s cp=0 cf=0

	log "Host tier: unit tests (ctest)"
	if (cd "$build" && ctest --output-on-failure) >"$ct" 2>&1; then :; fi
	cat "$ct"
	ctest_counts "$ct" host

	log "Host tier: bats"
	# vm/selftest: the guest-log parser's own tests run on the host too
	CETCTL="$build/cetctl" CETCTL_BUILD="$build" bats --tap tests/host vm/selftest >"$tap" 2>&1
	cat "$tap"
	if ! read -r p f s < <(counts tap "$tap"); then
		p=0 f=0 s=0
		broken+=("host: bats ran no test")
	fi
	add_counts host $((p + cp)) $((f + cf)) "$s"
}

run_asan() {
	local abuild=${build}-asan tap=$artifacts/asan.tap p f s cp cf
	log "Host tier under ASan+UBSan"
	if ! { cmake -S "$top" -B "$abuild" -DCETCTL_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null &&
	       cmake --build "$abuild" -j"$(nproc)"; }; then
		broken+=("asan: build failed")
		return
	fi
	(cd "$abuild" && ctest --output-on-failure) >"$artifacts/asan-ctest.log" 2>&1 || true
	ctest_counts "$artifacts/asan-ctest.log" asan
	[ "$cf" -eq 0 ] || grep -E 'Failed|\*\*\*' "$artifacts/asan-ctest.log" || true
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	CETCTL="$abuild/cetctl" CETCTL_BUILD="$abuild" bats --tap tests/host >"$tap" 2>&1
	if ! read -r p f s < <(counts tap "$tap"); then
		p=0 f=0 s=0
		broken+=("asan: bats ran no test")
	fi
	grep -E '^not ok' "$tap" || true
	add_counts asan $((p + cp)) $((f + cf)) "$s"
}

# The asan tier alongside the bochs tier (see the top): deferred when bochs
# follows it, started in the background when the bochs tier starts, and joined
# when that tier ends (its output and counts taken in then); run in turn when
# the bochs tier never got as far as Bochs.
asan_state=none	# none, deferred, running
asan_out=$artifacts/asan-tier.out
asan_counts=$artifacts/asan-tier.counts

# run in a process of its own: its counts and errors go to $asan_counts
asan_background() {
	local l
	summary=() broken=() total_pass=0 total_fail=0 total_skip=0
	run_asan
	{
		echo "counts $total_pass $total_fail $total_skip"
		for l in "${summary[@]}"; do echo "summary $l"; done
		for l in "${broken[@]}"; do echo "broken $l"; done
	} >"$asan_counts"
}

asan_start() {
	[ "$asan_state" = deferred ] || return 0
	log "Host tier under ASan+UBSan: started alongside the bochs tier (output: $asan_out)"
	rm -f "$asan_counts"	# a stale one must never stand for this run
	asan_background >"$asan_out" 2>&1 &
	asan_pid=$!
	asan_state=running
}

asan_join() {
	local kind rest p f s counted=0
	case $asan_state in
	deferred) asan_state=none; run_asan; return ;;
	running) ;;
	*) return 0 ;;
	esac
	asan_state=none
	wait "$asan_pid"
	cat "$asan_out"
	# "counts P F S", then its summary and broken lines, added to ours
	while read -r kind rest; do
		case $kind in
		counts)
			read -r p f s <<<"$rest"
			total_pass=$((total_pass + p))
			total_fail=$((total_fail + f))
			total_skip=$((total_skip + s))
			counted=1 ;;
		summary) summary+=("$rest") ;;
		broken) broken+=("$rest") ;;
		esac
	done < <(cat "$asan_counts" 2>/dev/null)
	[ "$counted" = 1 ] || broken+=("asan: the background run left no counts (see $asan_out)")
}

# A bounded libFuzzer run (clang, build-fuzz/): each target gets
# CETCTL_FUZZ_SECONDS (15) s; a target that crashes counts as a failure.
run_fuzz() {
	local out=$artifacts/fuzz.log p=0 f=0 s
	log "Fuzz tier: ${CETCTL_FUZZ_SECONDS:-15} s per target"
	CETCTL_FUZZ_BUILD=${build}-fuzz bash tests/fuzz/run.sh "${CETCTL_FUZZ_SECONDS:-15}" >"$out" 2>&1
	cat "$out"
	if ! read -r p f s < <(counts fuzz "$out"); then
		p=0 f=0
		broken+=("fuzz: no target ran (see $out)")
	fi
	add_counts fuzz "$p" "$f" 0
}

kernel=""
initrd=""
prepare_guest() {
	[ -n "$initrd" ] && return 0
	log "Building the kernel (linux-source-6.1 + kernel-series/)"
	local out
	if ! out=$(bash vm/build-kernel.sh); then
		broken+=("kernel build failed")
		return 1
	fi
	kernel=$(printf '%s\n' "$out" | tail -n1)
	log "Building mainline's shadow-stack selftest (linux-source-6.12)"
	if ! bash vm/mainline-selftest.sh "$build" >/dev/null; then
		broken+=("mainline selftest build failed")
		return 1
	fi
	log "Building the guest initramfs"
	if ! out=$(bash vm/mkinitramfs.sh "$build"); then
		broken+=("initramfs build failed")
		return 1
	fi
	initrd=$(printf '%s\n' "$out" | tail -n1)
}

# run_guest TIER RUNNER KERNEL [RUNNER ARGS...]
run_guest() {
	local tier=$1 runner=$2 k=$3 glog=$artifacts/$1-console.log
	shift 3
	log "$tier tier: booting $k"
	bash "$runner" "$k" "$initrd" --log "$glog" "$@" >"$artifacts/$tier-runner.out" 2>"$artifacts/$tier-runner.err" || true
	judge_guest "$tier" "$glog"
}

# judge_guest TIER LOG [--allow ERE]...: vm/parse-results.sh's verdict on a guest's console log,
# added to the totals; a log without a result, or whose kernel-log check
# failed with every test passing, makes the run broken.
judge_guest() {
	local tier=$1 glog=$2 res rc p='' f='' s=''
	shift 2	# the rest: parse-results options (--allow ERE)
	res=$(bash vm/parse-results.sh "$glog" "$tier" "$@")
	rc=$?
	printf '%s\n' "$res"
	# parse-results prints "TIER: N passed, N failed, N skipped" last
	read -r p f s < <(counts summary <(printf '%s\n' "$res" | tail -n1))
	if [ -z "${p:-}" ]; then
		broken+=("$tier: no result (see $glog)")
		return
	fi
	[ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || broken+=("$tier: guest log check failed (see $glog)")
	add_counts "$tier" "$p" "$f" "$s"
}

# The kernel's own selftests on unpatched 6.1 and on ours, compared by
# vm/kselftest-compare.py. The unpatched side is tests/guest/kselftest-baseline-6.1.txt
# when that was recorded for the same inputs (its key: config fragment, package
# version, selftest build and runner); otherwise, or with CETCTL_KSELFTEST_LIVE=1,
# unpatched 6.1 is built (vm/build-kernel.sh --base) and booted here, and
# CETCTL_KSELFTEST_RECORD=1 writes its result as the new baseline.
kselftest_key() {
	{ cat vm/kernel.config vm/guest-kselftest.sh vm/kselftests.sh
	  dpkg-query -W -f='${Version}' linux-source-6.1; } | sha256sum | cut -c1-16
}

run_kselftest() {
	local base ksft kinitrd out p f s rc key tmo=${CETCTL_KSELFTEST_TIMEOUT:-2400}
	local blog=$artifacts/kselftest-base-console.log olog=$artifacts/kselftest-ours-console.log
	local recorded=tests/guest/kselftest-baseline-6.1.txt
	if ! ksft=$(bash vm/kselftests.sh "$build" | tail -n1) ||
	   ! kinitrd=$(bash vm/mkinitramfs.sh --kselftest "$ksft" "$build" | tail -n1); then
		broken+=("kselftest: building the selftests or their image failed")
		return
	fi
	local -a common=(--suites kselftest --append "cetctl.kselftest=1 numa=fake=2"
		--timeout "$tmo" --append "cetctl.timeout=$tmo")
	key=$(kselftest_key)
	if [ "${CETCTL_KSELFTEST_LIVE:-0}" != 1 ] && [ -f "$recorded" ] &&
	   [ "$(python3 vm/kselftest-compare.py --key "$recorded")" = "$key" ]; then
		log "kselftest tier: unpatched 6.1 from $recorded (key $key)"
		cp "$recorded" "$blog"
	else
		log "kselftest tier: building unpatched linux-source-6.1 (same config; no baseline recorded for key $key)"
		if ! out=$(bash vm/build-kernel.sh --base); then
			broken+=("kselftest: baseline kernel build failed")
			return
		fi
		base=$(printf '%s\n' "$out" | tail -n1)
		log "kselftest tier: unpatched 6.1"
		bash vm/run-qemu.sh "$base" "$kinitrd" --log "$blog" --tier kselftest-base --no-parse "${common[@]}" \
			>"$artifacts/kselftest-base.out" 2>&1 || broken+=("kselftest: the unpatched 6.1 boot did not finish (see $blog)")
		if [ "${CETCTL_KSELFTEST_RECORD:-0}" = 1 ]; then
			python3 vm/kselftest-compare.py --record "$key" \
				"unpatched linux-source-6.1 $(dpkg-query -W -f='${Version}' linux-source-6.1), vm/kernel.config, recorded by tests/run-all.sh kselftest with CETCTL_KSELFTEST_RECORD=1 on $(date -u +%F)" \
				"$blog" >"$recorded"
			log "kselftest tier: recorded $recorded"
		fi
	fi
	log "kselftest tier: our kernel"
	# the usual verdict on our boot: an unexpected WARN/BUG/oops fails it
	bash vm/run-qemu.sh "$kernel" "$kinitrd" --log "$olog" --tier kselftest "${common[@]}" \
		>"$artifacts/kselftest-ours.out" 2>&1
	rc=$?
	out=$(python3 vm/kselftest-compare.py "$blog" "$olog")
	printf '%s\n' "$out" | tee "$artifacts/kselftest-compare.txt"
	read -r p f s < <(counts summary <(printf '%s\n' "$out" | tail -n1))
	if [ -z "${p:-}" ]; then
		broken+=("kselftest: no comparison (see $artifacts/kselftest-compare.txt)")
		return
	fi
	if [ "$rc" -ne 0 ]; then
		tail -n 15 "$artifacts/kselftest-ours.out"
		broken+=("kselftest: our boot's log check failed (see $olog)")
	fi
	add_counts kselftest "$p" "$f" "$s"
}

# CRIU 4.2 (vm/build-criu.sh) checkpointing and restoring shadow-stack processes
# (tests/guest/criu.bats): a Bochs boot of its own, on an image with criu and the zdtm
# tests, with the legacy-ELF policy relaxed for the zdtm tests' SHSTK marking.
run_criu() {
	local cdir cinitrd
	log "Building CRIU 4.2 and its zdtm tests (vm/build-criu.sh)"
	if ! cdir=$(bash vm/build-criu.sh | tail -n1) ||
	   ! cinitrd=$(bash vm/mkinitramfs.sh --criu "$cdir" "$build" | tail -n1); then
		broken+=("criu: building CRIU 4.2 or its guest image failed")
		return
	fi
	initrd=$cinitrd run_guest bochs-criu vm/run-bochs.sh "$1" --suites criu \
		--append "cetctl.criu=1 shstk_legacy_elf=allow" --label bochs-criu --megs 512
}

# Debian 13's glibc 2.41 built with CET, managing shadow stacks itself
# (tests/guest/glibc-cet.bats: cetctl says why it leaves them off). The glibc
# build takes long (vm/build-glibc-cet.sh says how long), so this boot runs only
# when it is cached, or with CETCTL_GLIBC_CET=1, which builds it.
run_glibc_cet() {
	local gdir ginitrd
	if ! gdir=$(bash vm/build-glibc-cet.sh --cached-only 2>/dev/null | tail -n1); then
		if [ "${CETCTL_GLIBC_CET:-0}" != 1 ]; then
			log "bochs-glibc-cet: skipped: no CET glibc cached (CETCTL_GLIBC_CET=1 builds it)"
			return
		fi
		log "Building Debian 13's glibc 2.41 with CET (vm/build-glibc-cet.sh)"
		if ! gdir=$(bash vm/build-glibc-cet.sh | tail -n1); then
			broken+=("glibc-cet: building the CET glibc failed")
			return
		fi
	fi
	if ! ginitrd=$(bash vm/mkinitramfs.sh --glibc-cet "$gdir" "$build" | tail -n1); then
		broken+=("glibc-cet: building its guest image failed")
		return
	fi
	# shstk_legacy_elf=allow: our series' default policy (block) refuses the
	# shadow-stack interface to marked executables, so glibc could never enable one
	# (mainline has no such policy; the suite's block test skips in this boot)
	initrd=$ginitrd run_guest bochs-glibc-cet vm/run-bochs.sh "$1" --suites glibc-cet \
		--append shstk_legacy_elf=allow --label bochs-glibc-cet
}

# A real Debian 12 system in the guest: a root built with mmdebstrap, our kernel
# installed from its linux-image .deb (make bindeb-pkg: vm/build-kernel.sh --deb) with
# dpkg, this checkout's cetctl .deb installed with apt (vm/debian-image.sh, cached by
# its inputs), booted with systemd as PID 1 in QEMU (vm/run-debian.sh); systemd runs
# tests/debian/ inside it: the audit timer and node_exporter, lighttpd as a service
# under `cetctl run`, the package upgraded and purged.
run_debian() {
	local kdeb img glog=$artifacts/debian-console.log
	log "debian tier: our kernel as a linux-image .deb (vm/build-kernel.sh --deb)"
	if ! kdeb=$(bash vm/build-kernel.sh --deb | tail -n1); then
		broken+=("debian: building the linux-image .deb failed")
		return
	fi
	log "debian tier: the Debian 12 image (vm/debian-image.sh)"
	if ! img=$(bash vm/debian-image.sh "$kdeb" | tail -n1); then
		broken+=("debian: building the Debian image failed")
		return
	fi
	log "debian tier: booting $img in QEMU"
	bash vm/run-debian.sh "$img" --log "$glog" >"$artifacts/debian-runner.out" 2>"$artifacts/debian-runner.err" || true
	tail -n 6 "$artifacts/debian-runner.err"
	judge_guest debian "$glog"
	# The CET half (lighttpd under cetctl run --shstk, enabled and locked, with its
	# workers) needs Bochs, where this system boots in about 6 min and each test
	# takes 30-60 s: beyond the tier's budget, so only with CETCTL_DEBIAN_BOCHS=1.
	[ "${CETCTL_DEBIAN_BOCHS:-0}" = 1 ] || return 0
	local kb blog=$artifacts/debian-bochs-console.log
	if ! kb=$(bash vm/build-kernel.sh --bochs | tail -n1); then
		broken+=("debian-bochs: Bochs kernel build failed")
		return
	fi
	log "debian tier: booting $img in Bochs (CETCTL_DEBIAN_BOCHS=1)"
	bash vm/run-debian.sh "$img" --bochs "$kb" --suites boot,daemon --log "$blog" \
		>"$artifacts/debian-bochs-runner.out" 2>"$artifacts/debian-bochs-runner.err" || true
	tail -n 4 "$artifacts/debian-bochs-runner.err"
	judge_guest debian-bochs "$blog"
}

# Debian 13 as cetctl's users there have it: trixie's root (vm/debian-image.sh --suite
# trixie) on Debian 13's kernel, linux-source-6.12 with Debian's config and no series of
# ours (vm/build-kernel.sh --debian13, plus the documented Bochs workaround), booted in
# Bochs only (the tier is about CET; its kernel carries the Bochs patch).
run_debian13() {
	local kdir img glog=$artifacts/debian13-console.log t0=$SECONDS
	log "debian13 tier: Debian 13's kernel (vm/build-kernel.sh --debian13; the first build takes hours)"
	if ! kdir=$(nice -n 15 bash vm/build-kernel.sh --debian13 | tail -n1); then
		broken+=("debian13: building Debian 13's kernel failed")
		return
	fi
	echo "debian13: kernel ready after $((SECONDS - t0)) s"
	log "debian13 tier: the Debian 13 image (vm/debian-image.sh --suite trixie)"
	if ! img=$(bash vm/debian-image.sh --suite trixie "$(dirname "$kdir")" | tail -n1); then
		broken+=("debian13: building the Debian 13 image failed")
		return
	fi
	echo "debian13: image ready after $((SECONDS - t0)) s"
	log "debian13 tier: booting $img in Bochs"
	# 6.12 WARNs once at boot about Bochs 2.7's legacy CPUID topology leaves
	# (topology_common.c parse_legacy), as in vm/run-ref.sh: an emulator property
	local allow=(--allow 'topology_common\.c:[0-9]+ parse_legacy')
	bash vm/run-debian.sh "$img" --bochs "$img/vmlinuz" --tier debian13 --log "$glog" \
		"${allow[@]}" >"$artifacts/debian13-runner.out" 2>"$artifacts/debian13-runner.err" || true
	tail -n 4 "$artifacts/debian13-runner.err"
	judge_guest debian13 "$glog" "${allow[@]}"
	echo "debian13: $((SECONDS - t0)) s in all"
}

# corpus_table TIER LOG: the world corpus's table and figures (vm/world.py) from a
# guest's console log into build/artifacts/TIER.{md,tsv,json}, printed; the goal's two
# checks as "TIER-goal: N passed, N failed" in $goal (empty when the log has no record).
corpus_table() {
	local a=$artifacts/$1
	goal=$(python3 vm/world.py "$2" --tsv "$a.tsv" --json "$a.json" --md "$a.md" --label "$1-goal")
	[ -n "$goal" ] && printf '%s\n' "$goal"
}

# The world corpus (tests/world/): its programs' workloads plainly and under `cetctl run
# --shstk`, in Bochs (emulated CET) on a Debian 12 root with the programs' packages and
# the cetctl .deb (vm/debian-image.sh --world), booted by an init of its own (no
# systemd: its boot alone takes about 6 min in Bochs). Counted: run-corpus's TAP (a
# program that fails without cetctl naming the cause fails) and the goal's two checks.
run_world() {
	local img kb glog=$artifacts/world-console.log p f s goal
	log "world tier: the Debian 12 root of the corpus (vm/debian-image.sh --world)"
	if ! img=$(bash vm/debian-image.sh --world | tail -n1); then
		broken+=("world: building the world image failed")
		return
	fi
	if ! kb=$(bash vm/build-kernel.sh --bochs | tail -n1); then
		broken+=("world: Bochs kernel build failed")
		return
	fi
	log "world tier: booting $img in Bochs with the corpus as init"
	bash vm/run-debian.sh "$img" --bochs "$kb" --tier world --append init=/usr/libexec/cetctl-world/init \
		--timeout "${CETCTL_WORLD_TIMEOUT:-10800}" --log "$glog" \
		>"$artifacts/world-runner.out" 2>"$artifacts/world-runner.err" || true
	tail -n 3 "$artifacts/world-runner.err"
	judge_guest world "$glog"
	corpus_table world "$glog"
	read -r p f s < <(counts summary <(printf '%s\n' "$goal" | tail -n1))
	if [ -z "${p:-}" ]; then
		broken+=("world: no corpus record in $glog")
		return
	fi
	add_counts world-goal "$p" "$f" "$s"
}

for t in "${tiers[@]}"; do
	case "$t" in
	host) run_host ;;
	asan)
		if [ "${CETCTL_ASAN_ALONGSIDE:-1}" != 0 ] && printf '%s\n' "${tiers[@]}" | grep -qx bochs; then
			asan_state=deferred
			log "Host tier under ASan+UBSan: deferred, to run alongside the bochs tier"
		else
			run_asan
		fi ;;
	fuzz) run_fuzz ;;
	qemu)
		if prepare_guest; then
			run_guest qemu vm/run-qemu.sh "$kernel"
			# a short second boot: the ELF oracle under the other legacy-ELF policy
			run_guest qemu-allow vm/run-qemu.sh "$kernel" --suites elf-oracle \
				--append shstk_legacy_elf=allow --label qemu-allow
		fi ;;
	kselftest)
		prepare_guest && run_kselftest ;;
	bochs)
		if prepare_guest; then
			log "Building the Bochs variant of the kernel (vm/bochs workaround)"
			if kb=$(bash vm/build-kernel.sh --bochs | tail -n1); then
				asan_start
				if [ "${CETCTL_FUZZ_SHSTK:-0}" = 1 ]; then
					run_guest bochs vm/run-bochs.sh "$kb" --append cetctl.fuzz=1
				else
					run_guest bochs vm/run-bochs.sh "$kb"
				fi
				# the world corpus's subset (tests/guest/corpus.bats): its table, for the
				# record; corpus.bats itself is what counts
				corpus_table bochs-corpus "$artifacts/bochs-console.log" || true
				# a short second boot: the nousershstk parameter switches them off
				run_guest bochs-nousershstk vm/run-bochs.sh "$kb" --suites nousershstk \
					--append nousershstk --label bochs-nousershstk
				run_criu "$kb"
				run_glibc_cet "$kb"
				# opt-in (CI budget): the same kernel on two emulated CPUs
				if [ "${CETCTL_BOCHS_SMP:-0}" = 1 ]; then
					run_guest bochs-smp vm/run-bochs.sh "$kb" --cpus 2 \
						--suites smp,conformance-flow,fuzz-shstk --timeout 5400 --label bochs-smp
				fi
			else
				broken+=("bochs kernel build failed")
			fi
		fi
		asan_join ;;
	debian) run_debian ;;
	debian13) run_debian13 ;;
	world) run_world ;;
	esac
done
asan_join	# still deferred: the bochs tier was not in the list after it

log "Summary ($((SECONDS - t_start)) s)"
printf '%s\n' "${summary[@]}"
for b in "${broken[@]}"; do
	echo "error: $b"
done
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ] && [ ${#broken[@]} -eq 0 ]
