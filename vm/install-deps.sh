#!/bin/bash
# vm/install-deps.sh [--force] — install every Debian 12 package cetctl needs
# (build, host tests, kernel build, QEMU and Bochs guest tiers).
#
# Idempotent: when dpkg-query reports every package installed it does nothing
# (prints one line) unless --force is given. Needs root (apt-get).
# Helpers append packages to the PKGS list below (one edit, keep it sorted by topic).
set -euo pipefail

PKGS=(
  # cetctl build
  build-essential cmake pkg-config git libbsd-dev libsmartcols-dev libelf-dev elfutils
  # kernel build
  ccache flex bison bc libssl-dev cpio xz-utils lz4 kmod dwarves linux-source-6.1
  # vm/build-matrix.sh (not in CI): Debian's own kernel config
  linux-config-6.1
  # mainline's shadow-stack selftest (vm/mainline-selftest.sh) and the reference kernel
  linux-source-6.12
  # the debian13 tier: Debian 13's kernel built with Debian's own config
  # (vm/build-kernel.sh --debian13)
  linux-config-6.12
  # the 6.1 tree's x86 and vm selftests (vm/kselftests.sh): 32-bit and static builds
  gcc-multilib libnuma-dev libcap-dev
  # headers_install of the 6.1 tree (kselftest tier) runs rsync
  rsync
  # guest image contents / tooling
  bats busybox-static bash coreutils grep sed gawk findutils util-linux procps dash perl-base
  gzip python3 jq strace
  # issue 13: JSON-schema check of every -J output (tests/host/json-schema.bats)
  python3-jsonschema
  # cetctl run/map: start-up benchmarks (bench/run-startup.sh: hyperfine, perf stat), file-capability test (setcap)
  hyperfine linux-perf libcap2-bin
  # issue 7: libFuzzer targets (tests/fuzz), scanelf for bench/elf.sh
  clang libclang-rt-14-dev pax-utils
  # issue 14: the real textfile collector in the host tests (tests/host/node-exporter.bats);
  # the Debian package (dpkg-buildpackage, debian/) and its checks
  prometheus-node-exporter curl debhelper lintian
  # the completion tests drive fish and zsh themselves (tests/host/options.bats)
  fish zsh
  # issue 11: outside fuzzers/stressors copied into the guest (tests/guest/trinity.bats,
  # tests/guest/stress-ng.bats)
  trinity stress-ng
  # issue 15: CRIU 4.2 built from ../shared/criu (vm/build-criu.sh) and run in the guest
  libprotobuf-c-dev protobuf-c-compiler protobuf-compiler python3-protobuf libnl-3-dev
  libnl-route-3-dev libnet1-dev libaio-dev libgnutls28-dev uuid-dev
  # CRIU's images import google/protobuf/descriptor.proto, which only libprotobuf-dev ships
  libprotobuf-dev
  # issue 21: the clean-room check (vm/clean-room.sh) and the Debian tier's root
  # (vm/debian-image.sh: mmdebstrap, mkfs.ext4 -d; make bindeb-pkg needs fakeroot)
  mmdebstrap e2fsprogs fakeroot dpkg-dev
  # issue 23: the host tier lints the shell scripts (tests/host/shellcheck.bats)
  shellcheck
  # issue 31: the world corpus's subset in the default guest image (tests/world,
  # tests/guest/corpus.bats): stack-switching programs and others from Debian; qemu-img
  # (ucontext coroutines) also runs under the preload library in
  # tests/guest/preload-ucontext.bats
  qemu-utils lua5.4 tcl8.6 sqlite3 openssl zstd bzip2 xz-utils
  # emulators and boot media
  qemu-system-x86 bochs bochsbios vgabios isolinux syslinux-common xorriso
)

force=0
case "${1:-}" in
  --force) force=1 ;;
  -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
  "") ;;
  *) echo "install-deps: unknown argument '$1' (try --help)" >&2; exit 1 ;;
esac

missing=()
for p in "${PKGS[@]}"; do
  st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ "$st" == installed ]] || missing+=("$p")
done

if [[ $force -eq 0 && ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#PKGS[@]} packages already installed"
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps: need root to install: ${missing[*]:-${PKGS[*]}}" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]:-(forced) ${PKGS[*]}}"
export DEBIAN_FRONTEND=noninteractive
timeout 900 apt-get update -qq
timeout 3600 apt-get install -y -qq --no-install-recommends \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${PKGS[@]}" >/dev/null
echo "install-deps: done"
