#!/bin/bash
# vm/debian-image.sh [--suite bookworm|trixie] KERNEL | --world — the Debian system of a
# Debian tier:
#
#   bookworm (default)  Debian 12, the debian tier (tests/run-all.sh debian): KERNEL is our
#                       kernel's linux-image .deb (vm/build-kernel.sh --deb), installed with
#                       dpkg; the guest tests are tests/debian/
#   trixie              Debian 13, the debian13 tier (tests/run-all.sh debian13): KERNEL is
#                       the directory of vm/build-kernel.sh --debian13 (Debian 13's 6.12 with
#                       Debian's config, no series of ours), laid out as Debian's linux-image
#                       package lays it out (/boot/vmlinuz-, config-, System.map-RELEASE; the
#                       built-in modules known to kmod); the guest tests are those
#                       tests/debian13/order names, from tests/debian13/ or else tests/debian/
#   --world             Debian 12, the world tier (tests/run-all.sh world): no KERNEL; see
#                       "--world" below
#
# A root file system built with mmdebstrap from this machine's Debian mirror (its apt
# sources, the suite names replaced for trixie), the cetctl .deb of this checkout
# (dpkg-buildpackage in a copy of the tracked files; the same package for both suites)
# installed with apt, the guest tests run at boot by a systemd unit (vm/debian-guest/).
# The LAST line of stdout is the image directory:
#   root.img       ext4 file system (the whole disk: no partition table, root=/dev/vda|sda)
#   vmlinuz        /boot/vmlinuz-RELEASE copied out of the image (what the .deb installed)
#   release        that kernel release
# Progress goes to stderr.
#
# --world: the world tier's root instead (tests/run-all.sh world): the corpus's programs
# (WORLD_PACKAGES below) and the cetctl .deb, no kernel (the Bochs kernel boots it from
# its ISO), no systemd: vm/world-guest/init is PID 1 (init=, given by run-all.sh) and
# runs tests/world/run-corpus (installed in /usr/libexec/cetctl-world/); the image has
# root.img and cylinders only. Bookworm only. Cached as world-<key> (key: the base, the
# .deb, tests/world/, vm/world-guest/ and this script).
#
# Cache (${CETCTL_CACHE:-/root/.cache/cetctl}/debian), each layer keyed by its inputs
# (trixie's base and image layers are named base-trixie-<key>, image-trixie-<key>; the
# world root's base is a base-<key> of its own package list):
#   base-<key>/root.tar        mmdebstrap --variant=minbase SUITE with PACKAGES below;
#                              key = recipe, suite, package list, mmdebstrap version, apt sources
#   cetctl-deb-<key>/*.deb     cetctl_V and cetctl_V+upgradetest1 (the upgrade test's second
#                              build; nocheck: the host tier runs the tests); key = the tracked
#                              files of the checkout as they are now, less vm/, kernel-series/,
#                              tests/debian/, tests/guest/*.bats
#   image-<key>/               key = the base, both .debs, the kernel, tests/debian/,
#                              tests/debian13/ (trixie), vm/debian-guest/ and this script
# A missing or partial layer is rebuilt; nothing depends on the cache existing.
# --dry-run builds nothing and takes no lock: it checks the arguments, computes each
# layer's key, says on stderr which directory each layer is and whether it is built,
# and prints the image directory it would make as its last line (vm/selftest/debian-image.bats).
# Env: CETCTL_CACHE, CETCTL_DEBIAN_MIRROR (default "-": the machine's own apt sources).
set -euo pipefail

die() { echo "debian-image: ERROR: $*" >&2; exit 1; }
say() { echo "debian-image: $*" >&2; }

usage="usage: vm/debian-image.sh [--dry-run] [--suite bookworm|trixie] KERNEL | [--dry-run] --world
  KERNEL     bookworm: a linux-image .deb from vm/build-kernel.sh --deb;
             trixie: the directory of vm/build-kernel.sh --debian13
  --world    the world tier's Debian 12 root (tests/world/), no kernel
  --dry-run  build nothing: name each layer's cache directory and whether it is built"
suite=bookworm world=0 dry=0 kdeb='' pos=()
while (($#)); do
  case $1 in
    -h|--help) echo "$usage"; exit 0 ;;
    --suite) (($# >= 2)) || die "--suite needs bookworm or trixie"
             suite=$2; shift 2 ;;
    --world) world=1; shift ;;
    --dry-run) dry=1; shift ;;
    -*) die "unknown option '$1'; $usage" ;;
    *) pos+=("$1"); shift ;;
  esac
done
[[ $suite == bookworm || $suite == trixie ]] || die "unknown suite '$suite' (bookworm or trixie)"
if ((world)); then
  [[ $suite == bookworm ]] || die "--world is a Debian 12 (bookworm) root, not $suite"
  ((${#pos[@]} == 0)) || die "--world takes no KERNEL; $usage"
else
  ((${#pos[@]} == 1)) || die "$usage"
  kdeb=$(readlink -f "${pos[0]}")
  if [[ $suite == bookworm ]]; then
    [[ -f $kdeb ]] || die "kernel package ${pos[0]} not found"
  else
    for f in bzImage config System.map release; do
      [[ -s $kdeb/$f ]] || die "${pos[0]} is not a kernel directory of vm/build-kernel.sh --debian13 (no $f)"
    done
  fi
fi
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CETCTL_CACHE:-/root/.cache/cetctl}/debian
MIRROR=${CETCTL_DEBIAN_MIRROR:--}
for t in mmdebstrap mkfs.ext4 dpkg-buildpackage dpkg-deb unshare chroot sha256sum flock git; do
  command -v "$t" >/dev/null || die "'$t' not found — run vm/install-deps.sh"
done
# dry_layer NAME DIR FILE: in a dry run, name the layer's directory and whether FILE
# (its mark of completion) is there; true when this is a dry run
dry_layer() {
  ((dry)) || return 1
  local state="to build"
  [[ -s $2/$3 ]] && state=cached
  say "dry run: $1 layer $2 ($state)"
}
mkdir -p "$CACHE"
if ((!dry)); then
  exec 8>"$CACHE/.lock"
  flock -w 3600 8 || die "timed out waiting for $CACHE/.lock"
fi

# What the guest needs besides minbase: systemd as PID 1 (with udev, as a real
# system has), node_exporter, a real network daemon, curl to talk to both, bats
# for the tests, procps; cetctl's own run-time dependencies so that apt
# installs the local .deb without fetching anything. Trixie: no node_exporter
# as a service (its binary is there: a Go program for tests/debian13/compat.bats), nginx
# as the daemon under cetctl (lighttpd 1.4.79 cannot run there:
# tests/debian13/daemon.bats), qemu-utils for its ucontext coroutines
# (tests/debian13/ucontext.bats); libelf1 is libelf1t64 there (it provides
# libelf1 (= its version), which the bookworm-built .deb asks for).
PACKAGES=(systemd-sysv udev prometheus-node-exporter lighttpd curl bats procps
          libbsd0 libelf1 libsmartcols1)
pfx=''
if [[ $suite == trixie ]]; then
  PACKAGES=(systemd-sysv udev lighttpd nginx curl bats procps libbsd0 libelf1t64 libsmartcols1
            qemu-utils prometheus-node-exporter)
  pfx=trixie-
fi
# The world tier's programs (tests/world/corpus.bash), started by its own init: no
# systemd; iproute2 brings up the loopback interface.
WORLD_PACKAGES=(bash dash coreutils sed gawk grep findutils diffutils tar perl python3 ruby
  php-cli lua5.4 tcl8.6 nodejs gzip xz-utils zstd bzip2 openssl git sqlite3 curl qemu-utils
  prometheus-node-exporter nginx-light redis-server redis-tools memcached openssh-server
  openssh-client lighttpd procps iproute2 libbsd0 libelf1 libsmartcols1)
((world)) && PACKAGES=("${WORLD_PACKAGES[@]}")
BASE_RECIPE=1   # bump when the base step changes

# The machine's Debian apt sources (deb822 stanzas naming bookworm suites), for trixie
# with the suite names replaced; other repositories are left out there.
machine_sources() {
  local srcs=(/etc/apt/sources.list.d/*.sources)
  [[ -f ${srcs[0]} ]] || srcs=(/etc/apt/sources.list)
  if [[ $suite == bookworm ]]; then cat "${srcs[@]}"; return; fi
  [[ ${srcs[0]} == *.sources ]] || die "trixie needs deb822 apt sources (/etc/apt/sources.list.d/*.sources)"
  awk 'BEGIN { RS = ""; ORS = "\n\n" } /\nSuites:[^\n]*bookworm/ { gsub(/bookworm/, "trixie"); print }' "${srcs[@]}"
}

h16() { sha256sum | cut -c1-16; }

# ---- layer 1: the base root (mmdebstrap) ------------------------------------
# (bookworm's key is computed as before the suites came, so its cached layers stay valid)
bkey=$( { echo "recipe $BASE_RECIPE"; printf '%s\n' "${PACKAGES[@]}" | sort
          mmdebstrap --version; echo "$MIRROR"
          cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
              /etc/apt/sources.list.d/*.sources 2>/dev/null || true
          [[ $suite == bookworm ]] || machine_sources; } | h16)
base=$CACHE/base-$pfx$bkey
if dry_layer base "$base" root.tar; then
  :
elif [[ ! -s $base/root.tar ]]; then
  say "building the $suite base root (mmdebstrap minbase $suite + ${#PACKAGES[@]} packages)"
  rm -rf "$base"; mkdir -p "$base"
  t0=$SECONDS
  inc=$(IFS=,; echo "${PACKAGES[*]}")
  # "-": the sources come on standard input: this machine's own
  if ! machine_sources | timeout 1800 mmdebstrap --variant=minbase --include="$inc" "$suite" \
         "$base/root.tmp.tar" "$MIRROR" >"$base/mmdebstrap.log" 2>&1; then
    tail -n 25 "$base/mmdebstrap.log" >&2
    die "mmdebstrap failed (log: $base/mmdebstrap.log)"
  fi
  mv "$base/root.tmp.tar" "$base/root.tar"
  say "base root built in $((SECONDS - t0)) s: $base/root.tar"
else
  say "cached base root: $base/root.tar"
fi

# ---- layer 2: the cetctl .debs of this checkout -----------------------------
# the tracked files as they are now (symlinks as links; times and owners left out),
# without those the package build never reads (the guest side, the kernel series), so
# that changing a guest test does not rebuild the package
srctar=$CACHE/.src-$$.tar
trap 'rm -f "$srctar"' EXIT
(cd "$REPO" && git ls-files -z -- . ':!vm' ':!kernel-series' ':!tests/debian' ':!tests/debian13' ':!tests/guest/*.bats' | tar --null -T - --sort=name --mtime=@0 --owner=0 --group=0 \
   --numeric-owner -cf -) > "$srctar" || die "archiving the checkout's tracked files failed"
skey=$( { echo "recipe 1"; sha256sum < "$srctar"; } | h16)
debs=$CACHE/cetctl-deb-$skey
if dry_layer cetctl-deb "$debs" 'done'; then
  :
elif [[ ! -s $debs/done ]]; then
  say "building the cetctl .debs of this checkout (dpkg-buildpackage, twice: V and V+upgradetest1)"
  rm -rf "$debs"; mkdir -p "$debs/src"
  t0=$SECONDS
  tar -xf "$srctar" -C "$debs/src"
  v1=$(cd "$debs/src" && dpkg-parsechangelog -S Version)
  v2=$v1+upgradetest1
  build() {
    (cd "$debs/src" && DEB_BUILD_OPTIONS=nocheck timeout 1800 nice -n 10 dpkg-buildpackage -b -us -uc "$@") \
      >>"$debs/build.log" 2>&1 || { tail -n 30 "$debs/build.log" >&2; die "dpkg-buildpackage failed (log: $debs/build.log)"; }
  }
  build
  # the second build: a higher version, as a newer upload would be (no clean: same tree)
  { printf 'cetctl (%s) unstable; urgency=medium\n\n  * Test upgrade of the debian tier (vm/debian-image.sh).\n\n -- %s  %s\n\n' \
      "$v2" "cetctl tests <cetctl@localhost>" "$(date -R -d @0)"
    cat "$debs/src/debian/changelog"; } > "$debs/changelog.new"
  mv "$debs/changelog.new" "$debs/src/debian/changelog"
  mkdir -p "$debs/v1"; mv "$debs"/cetctl_"$v1"_*.deb "$debs/v1/"
  build -nc
  rm -f "$debs"/*dbgsym*.deb
  [[ -f $debs/v1/cetctl_${v1}_amd64.deb && -f $debs/cetctl_${v2}_amd64.deb ]] ||
    die "dpkg-buildpackage did not produce cetctl_${v1}_amd64.deb and cetctl_${v2}_amd64.deb (log: $debs/build.log)"
  mv "$debs/v1/cetctl_${v1}_amd64.deb" "$debs/"
  rm -rf "$debs/src" "$debs/v1"
  printf '%s\n%s\n' "cetctl_${v1}_amd64.deb" "cetctl_${v2}_amd64.deb" > "$debs/done"
  say "cetctl .debs built in $((SECONDS - t0)) s: $debs"
else
  say "cached cetctl .debs: $debs"
fi
((dry)) || mapfile -t cdebs < "$debs/done"

# ext4 without mounting (mkfs -d); the size a multiple of 16*63 sectors so that
# Bochs' ATA disk takes it as cylinders x 16 heads x 63 sectors
make_disk() {
  used=$(du -sm "$root" | cut -f1)
  cyl=$(( (used * 2 + 512) * 1048576 / (16 * 63 * 512) + 1 ))
  truncate -s $((cyl * 16 * 63 * 512)) "$img/root.img.tmp"
  mkfs.ext4 -q -F -L cetroot -d "$root" "$img/root.img.tmp" >>"$img/install.log" 2>&1 ||
    die "mkfs.ext4 -d failed (log: $img/install.log)"
  mv "$img/root.img.tmp" "$img/root.img"
  echo "$cyl" > "$img/cylinders"
  rm -rf "$root"
  echo "$ikey" > "$img/done"
  # keep the two newest of each layer (of this suite: bookworm's keys are hex, trixie's
  # start with its prefix; the cetctl .debs serve both; the world root's base shares
  # bookworm's base-<key> names)
  for l in "base-$pfx" cetctl-deb- "image-$pfx" world-; do
    { ls -dt "$CACHE/$l"[0-9a-f]* 2>/dev/null || true; } | tail -n +3 | xargs -r rm -rf
  done
}

# in_root WHAT: run the commands on stdin (a script using chroot "$root") with the root's
# /proc, /sys and /dev mounted, in a private mount namespace (nothing stays mounted);
# its output into install.log, which is shown when it fails
in_root() {
  { echo 'set -e'
    echo "mount -t proc proc \"$root/proc\""
    echo "mount -t sysfs sysfs \"$root/sys\""
    echo "mount --bind /dev \"$root/dev\""
    echo 'export DEBIAN_FRONTEND=noninteractive LC_ALL=C PATH=/usr/sbin:/usr/bin:/sbin:/bin'
    cat; } > "$img/install.sh"
  if ! timeout 900 unshare -m --propagation private bash "$img/install.sh" >"$img/install.log" 2>&1; then
    tail -n 25 "$img/install.log" >&2
    die "$1 failed (log: $img/install.log)"
  fi
}

# the world tier's root: the cetctl .deb, the corpus and its init; no kernel, no systemd
world_image() {
  cp "$debs/${cdebs[0]}" "$root/var/cache/cetctl-test/"
  install -D -m 0755 "$REPO/vm/world-guest/init" "$root/usr/libexec/cetctl-world/init"
  install -m 0755 "$REPO/tests/world/run-corpus" "$root/usr/libexec/cetctl-world/"
  install -m 0644 "$REPO/tests/world/corpus.bash" "$root/usr/libexec/cetctl-world/"
  echo cetguest > "$root/etc/hostname"
  printf '127.0.0.1\tlocalhost\n127.0.1.1\tcetguest\n' > "$root/etc/hosts"
  in_root "installing the cetctl .deb in the world image" <<EOF
chroot "$root" apt-get install -y --no-install-recommends /var/cache/cetctl-test/${cdebs[0]}
EOF
  rm -f "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/cetctl-test/*.deb
  make_disk
  say "world image assembled in $((SECONDS - t0)) s: $img ($used MiB used, $(( cyl * 16 * 63 / 2048 )) MiB disk)"
  echo "$img"
  exit 0
}

# ---- layer 3: the image ------------------------------------------------------
GUEST=$REPO/vm/debian-guest
if ((world)); then
  ikey=$( { echo "$bkey"; echo "$skey"; sha256sum < "${BASH_SOURCE[0]}"
            (cd "$REPO" && find tests/world vm/world-guest -type f -print0 | sort -z | xargs -0 sha256sum); } | h16)
  img=$CACHE/world-$ikey
else
  # the kernel: the .deb, or (trixie) the files of the build directory the image takes
  if [[ $suite == bookworm ]]; then
    kfiles=("$kdeb")
    tdirs=(tests/debian)
  else
    kfiles=("$kdeb"/bzImage "$kdeb"/config "$kdeb"/System.map "$kdeb"/release)
    for f in modules.builtin modules.builtin.modinfo; do [[ -f $kdeb/$f ]] && kfiles+=("$kdeb/$f"); done
    tdirs=(tests/debian tests/debian13)
  fi
  ikey=$( { echo "$bkey"; echo "$skey"; cat "${kfiles[@]}" | sha256sum; sha256sum < "${BASH_SOURCE[0]}"
            (cd "$REPO" && find "${tdirs[@]}" vm/debian-guest tests/guest/helpers/shstk_elf.c \
               tests/guest/helpers/shstk.h src/lib/cet-abi.h -type f -print0 | sort -z | xargs -0 sha256sum); } | h16)
  img=$CACHE/image-$pfx$ikey
fi
if dry_layer image "$img" 'done'; then
  echo "$img"
  exit 0
fi
if [[ -s $img/done ]]; then
  say "cached image: $img"
  echo "$img"
  exit 0
fi
say "assembling the image (key $ikey)"
t0=$SECONDS
rm -rf "$img"; mkdir -p "$img"
root=$img/root
mkdir "$root"
tar -xf "$base/root.tar" -C "$root"
mkdir -p "$root/var/cache/cetctl-test"
((world)) && world_image   # above: it exits
[[ $suite == bookworm ]] && cp "$kdeb" "$root/var/cache/cetctl-test/"
for d in "${cdebs[@]}"; do cp "$debs/$d" "$root/var/cache/cetctl-test/"; done

# the guest side: test runner, its unit, the tests, the units' test configuration
install -D -m 0755 "$GUEST/run-tests" "$root/usr/libexec/cetctl-debian/run-tests"
install -d "$root/usr/libexec/cetctl-debian/helpers"
install -D -m 0644 "$GUEST/cetctl-debian-tests.service" "$root/etc/systemd/system/cetctl-debian-tests.service"
T=$root/usr/share/cetctl-debian/tests
install -d "$T"
if [[ $suite == bookworm ]]; then
  install -m 0644 "$REPO"/tests/debian/*.bats "$REPO"/tests/debian/lib.bash "$T/"
  [[ -f $REPO/tests/debian/order ]] && install -m 0644 "$REPO/tests/debian/order" "$T/"
else
  # tests/debian13/order names the suites: each from tests/debian13/, else tests/debian/
  install -m 0644 "$REPO"/tests/debian/lib.bash "$REPO"/tests/debian13/order "$T/"
  while read -r name; do
    for d in tests/debian13 tests/debian; do
      [[ -f $REPO/$d/$name ]] && { install -m 0644 "$REPO/$d/$name" "$T/"; break; }
    done
    [[ -f $T/$name ]] || die "tests/debian13/order names $name, in neither tests/debian13/ nor tests/debian/"
  done < <(grep -v '^#' "$REPO/tests/debian13/order")
fi
# the legacy-ELF program of the guest suites, unmarked and marked SHSTK (kernel-abi.bats)
for v in plain marked; do
  mark=()
  [[ $v == marked ]] && mark=("-Wl,-z,shstk")
  gcc -O2 -static -D_GNU_SOURCE -fcf-protection=none -fno-stack-protector -pthread \
    -I"$REPO/tests/guest/helpers" -I"$REPO/src/lib" "$REPO/tests/guest/helpers/shstk_elf.c" \
    -o "$root/usr/libexec/cetctl-debian/helpers/shstk_elf_$v" "${mark[@]}" >>"$img/install.log" 2>&1 ||
    die "building the guest helper shstk_elf_$v failed (log: $img/install.log)"
done
cp -r "$GUEST/etc/." "$root/etc/"
echo "v1=${cdebs[0]}" > "$root/var/cache/cetctl-test/debs"
echo "v2=${cdebs[1]}" >> "$root/var/cache/cetctl-test/debs"
if [[ $suite == bookworm ]]; then
  echo "kernel=$(basename "$kdeb")" >> "$root/var/cache/cetctl-test/debs"
else
  # Debian 13's kernel as its linux-image package lays it out (no package: it is a
  # test build); kmod learns the built-in modules from modules.builtin (depmod below)
  rel=$(cat "$kdeb/release")
  install -m 0644 "$kdeb/bzImage" "$root/boot/vmlinuz-$rel"
  install -m 0644 "$kdeb/config" "$root/boot/config-$rel"
  install -m 0644 "$kdeb/System.map" "$root/boot/System.map-$rel"
  install -d "$root/lib/modules/$rel"
  for f in modules.builtin modules.builtin.modinfo; do
    [[ -f $kdeb/$f ]] && install -m 0644 "$kdeb/$f" "$root/lib/modules/$rel/"
  done
  : > "$root/lib/modules/$rel/modules.order"
fi

# a machine-id of its own (no first-boot machinery), a hostname, no login prompt
# on the serial console (it carries the test protocol)
printf '%s\n' "$(echo "cetctl-debian-$ikey" | md5sum | cut -c1-32)" > "$root/etc/machine-id"
echo cetguest > "$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tcetguest\n' > "$root/etc/hosts"

# dpkg and apt in the root; trixie's kernel files are in place already
kinstall=:
# trixie: lighttpd is started by its test only (it dies under cetctl run --shstk there,
# tests/debian13/daemon.bats); nginx is the daemon that runs at boot; node_exporter is
# there for its binary only (a Go program: tests/debian13/compat.bats)
trixie_units=:
[[ $suite == trixie ]] &&
  trixie_units="chroot \"$root\" systemctl disable lighttpd.service prometheus-node-exporter.service"
[[ $suite == bookworm ]] && kinstall="chroot \"$root\" dpkg -i /var/cache/cetctl-test/$(basename "$kdeb")"
in_root "installing the packages in the image" <<EOF
$kinstall
chroot "$root" apt-get install -y --no-install-recommends /var/cache/cetctl-test/${cdebs[0]}
chroot "$root" systemctl enable cetctl-debian-tests.service
chroot "$root" systemctl mask serial-getty@ttyS0.service getty@tty1.service
# not what the tier tests, and slow under emulation (15 s and 8 s of the QEMU boot):
# e2scrub_reap cleans up LVM snapshots of e2scrub, getty-static starts gettys on
# virtual terminals (this kernel has none)
chroot "$root" systemctl mask e2scrub_reap.service getty-static.service
$trixie_units
EOF
if [[ $suite == trixie ]]; then
  depmod -b "$root" "$(cat "$kdeb/release")" >>"$img/install.log" 2>&1 ||
    die "depmod for the built-in modules failed (log: $img/install.log)"
fi
rel=$(cd "$root/boot" && ls vmlinuz-* 2>/dev/null | sed 's/^vmlinuz-//')
[[ -n $rel && $(wc -w <<<"$rel") == 1 ]] || die "expected one /boot/vmlinuz-* in the image, found '$rel'"
cp "$root/boot/vmlinuz-$rel" "$img/vmlinuz"
echo "$rel" > "$img/release"
rm -f "$root"/var/cache/apt/archives/*.deb

make_disk
say "image assembled in $((SECONDS - t0)) s: $img (kernel $rel, $used MiB used, $(( cyl * 16 * 63 / 2048 )) MiB disk)"
echo "$img"
