#!/bin/bash
# vm/build-kernel.sh [--bochs] — build the cetctl test kernel (bzImage).
#
#   vm/build-kernel.sh           QEMU kernel: linux-source-6.1 + kernel-series/ + vm/kernel.config
#   vm/build-kernel.sh --bochs   the same tree + vm/bochs/cet-bochs27-quirks.patch (test-only
#                                Bochs 2.7 workarounds, boot-parameter gated), built
#                                incrementally after the QEMU kernel; output bzImage-bochs
#   vm/build-kernel.sh --base    unpatched linux-source-6.1 with the same config fragment
#                                (its own tree, ktree/<pkgver>-base): the baseline of the
#                                kernel selftest comparison (tests/run-all.sh kselftest)
#   vm/build-kernel.sh --deb     the QEMU kernel (same tree, series and config) packaged the
#                                Debian way by `make bindeb-pkg`: the LAST line is the path of
#                                its linux-image .deb (tests/run-all.sh debian installs it with
#                                dpkg in a Debian 12 root, vm/debian-image.sh); kernel/<key>/
#                                bzImage is not touched
#   vm/build-kernel.sh --ref [--bochs]   reference kernel, NOT in CI: Debian's
#                                linux-source-6.12 (mainline shadow stacks, no series) with
#                                the same config fragment (and the same Bochs patch), so the
#                                suites can be compared against mainline behaviour
#   vm/build-kernel.sh --ref --fixes [--bochs]   the same with kernel-series/mainline/
#                                (our fixes for mainline, its `series` file) applied
#   vm/build-kernel.sh --debian13   Debian 13's kernel for the debian13 tier (tests/run-all.sh
#                                debian13): linux-source-6.12 with Debian's own config
#                                (linux-config-6.12, config.amd64_none_amd64) reduced to the
#                                modules vm/debian13/kernel-builtin.list builds in (every =y
#                                kept: vm/debian13/kernel-config.sh), no series, plus
#                                vm/bochs/cet-bochs27-quirks.patch (it boots in Bochs only);
#                                its own tree (ktree/<pkgver>-debian13). Next to the bzImage:
#                                config, System.map, release, config-diff.txt (what differs
#                                from Debian's config). Default make timeout 4 h (the config keeps
#                                Debian's DEBUG_INFO and BTF)
#
# The LAST line of stdout is the absolute path of the bzImage; progress goes to stderr,
# the make output to a log file next to the output (its path is printed on failure).
#
# Cache (${CETCTL_CACHE:-/root/.cache/cetctl}):
#   ktree/<pkgver>/linux     one git tree per linux-source package version: commit "base" =
#                            the extracted tarball; the series is re-applied with `git am`
#                            only when kernel-series/ changed (so rebuilds stay incremental)
#   kernel/<key>/bzImage     key = sha256(recipe, package version, kernel-series/*, vm/kernel.config)
#   kernel/<key>/bochs-<bkey>/bzImage-bochs   bkey = sha256(vm/bochs/*.patch)
#   kernel/<key>/deb-<DEB_RECIPE>/linux-image-<release>_<release>-1_amd64.deb   (--deb)
#   kernel/debian13-<key>/bzImage   key = sha256(recipe, linux-source-6.12 and linux-config-6.12
#                            versions, vm/debian13/kernel-config.sh and kernel-builtin.list,
#                            the Bochs patch)
# Unchanged inputs → the cached bzImage is reused ("cached").
# Env: CETCTL_SERIES_DIR (another series dir with a `series` file, for trying a
#      series before it is committed), CETCTL_CACHE, CETCTL_JOBS (default nproc), CETCTL_MAKE_TIMEOUT (s, default 5400),
#      CCACHE_DIR (default: ccache's own default, shared with other kernel builds here).
set -euo pipefail

die() { echo "build-kernel: ERROR: $*" >&2; exit 1; }
say() { echo "build-kernel: $*" >&2; }

variant=qemu ref=0 base=0 deb=0 fixes=0 d13=0
for a in "$@"; do
  case $a in
    --bochs) variant=bochs ;;
    --deb) deb=1 ;;
    --ref) ref=1 ;;
    --base) base=1 ;;
    --fixes) fixes=1 ;;
    --debian13) d13=1 ;;
    -h|--help) sed -n '2,/^set -euo/{ /^#/p }' "$0"; exit 0 ;;
    *) die "unknown argument '$a' (usage: vm/build-kernel.sh [--ref [--fixes]|--base] [--bochs] | --deb | --debian13)" ;;
  esac
done

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CETCTL_CACHE:-/root/.cache/cetctl}
JOBS=${CETCTL_JOBS:-$(nproc)}
MAKE_TMO=${CETCTL_MAKE_TIMEOUT:-5400}
SERIES_DIR=${CETCTL_SERIES_DIR:-$REPO/kernel-series}
FRAG=$REPO/vm/kernel.config
BOCHS_DIR=$REPO/vm/bochs
BOCHS_PATCH=$BOCHS_DIR/cet-bochs27-quirks.patch
SRCPKG=linux-source-6.1
((ref || d13)) && SRCPKG=linux-source-6.12
((d13)) && MAKE_TMO=${CETCTL_MAKE_TIMEOUT:-14400}
D13_DIR=$REPO/vm/debian13
D13_CONFIG=/usr/src/linux-config-6.12/config.amd64_none_amd64.xz
TARBALL=/usr/src/$SRCPKG.tar.xz

for t in git make gcc ccache flex bison bc xz sha256sum flock timeout; do
  command -v "$t" >/dev/null || die "'$t' not found — run vm/install-deps.sh"
done

pkgver=$(dpkg-query -W -f='${db:Status-Status} ${Version}' $SRCPKG 2>/dev/null || true)
if [[ "$pkgver" != installed\ * ]]; then
  ((ref || d13)) && die "package $SRCPKG is not installed (run vm/install-deps.sh)"
  die "package $SRCPKG is not installed (run vm/install-deps.sh)"
fi
pkgver=${pkgver#installed }
[[ -f $TARBALL ]] || die "$TARBALL missing although $SRCPKG $pkgver is installed"
say "found $SRCPKG package version $pkgver ($TARBALL)"
[[ -f $FRAG ]] || die "config fragment $FRAG missing"

# Patches listed in kernel-series/series (quilt style: one file name per line, # comments).
((ref && base)) && die "--ref and --base exclude each other"
((d13)) && { ((!ref && !base && !deb && !fixes)) && [[ $variant == qemu ]] ||
             die "--debian13 takes no other option (it is always the Bochs build)"; }
((fixes && !ref)) && die "--fixes needs --ref (kernel-series/mainline/ is for linux-source-6.12)"
((fixes)) && SERIES_DIR=$REPO/kernel-series/mainline
[[ $variant == bochs ]] && ((base)) && die "--base has no Bochs variant"
((deb)) && { [[ $variant == qemu ]] && ((!ref && !base)) || die "--deb packages the QEMU kernel only (no --bochs, --ref, --base)"; }
# bindeb-pkg: dpkg-buildpackage (dpkg-dev) under fakeroot (the kernel's KBUILD_PKG_ROOTCMD)
if ((deb)); then
  for t in dpkg-buildpackage fakeroot; do
    command -v $t >/dev/null || die "'$t' not found (make bindeb-pkg needs it) — run vm/install-deps.sh"
  done
fi
patches=()
if ((d13)); then
  say "debian13 build: Debian's config, kernel-series/ is NOT applied"
elif ((base)); then
  say "baseline build: kernel-series/ is NOT applied (unpatched $SRCPKG)"
elif ((ref && !fixes)); then
  say "reference build: kernel-series/ is NOT applied (mainline shadow stacks of $SRCPKG)"
elif [[ -f $SERIES_DIR/series ]]; then
  while IFS= read -r l; do
    l=${l%%#*}; l=$(echo "$l" | awk '{print $1}')
    [[ -n $l ]] || continue
    [[ -f $SERIES_DIR/$l ]] || die "kernel-series/series lists '$l' but kernel-series/$l does not exist"
    patches+=("$l")
  done < "$SERIES_DIR/series"
fi

# only what git am applies counts (the series file and the patches it lists), so
# documentation next to the patches (PARITY.md) does not invalidate the cache
series_hash=$( { cat "$SERIES_DIR/series" 2>/dev/null
                 for p in "${patches[@]}"; do sha256sum < "$SERIES_DIR/$p"; done; } |
               sha256sum | cut -c1-16)
((ref && !fixes)) && series_hash=none
((base)) && series_hash=base
((d13)) && series_hash=debian13
RECIPE=2   # bump when this script changes how a kernel is built (invalidates the cache)
key=$( { echo "recipe $RECIPE"; echo "$pkgver"; echo "$series_hash"; sha256sum < "$FRAG"; } | sha256sum | cut -c1-16)
outdir=$CACHE/kernel/$key
((ref)) && outdir=$CACHE/kernel/ref-$key
((base)) && outdir=$CACHE/kernel/base-$key
if ((d13)); then
  cfgver=$(dpkg-query -W -f='${db:Status-Status} ${Version}' linux-config-6.12 2>/dev/null || true)
  [[ $cfgver == installed\ * && -s $D13_CONFIG ]] ||
    die "package linux-config-6.12 is not installed or lacks $D13_CONFIG (run vm/install-deps.sh)"
  [[ -f $BOCHS_PATCH ]] || die "$BOCHS_PATCH missing"
  key=$( { echo "recipe $RECIPE debian13 1"; echo "$pkgver"; echo "${cfgver#installed }"
           sha256sum < "$D13_DIR/kernel-config.sh"; sha256sum < "$D13_DIR/kernel-builtin.list"
           sha256sum < "$BOCHS_PATCH"; } | sha256sum | cut -c1-16)
  outdir=$CACHE/kernel/debian13-$key
  out=$outdir/bzImage
elif [[ $variant == bochs ]]; then
  [[ -f $BOCHS_PATCH ]] || die "$BOCHS_PATCH missing"
  bkey=$(sha256sum < "$BOCHS_PATCH" | cut -c1-16)   # only the patch affects the kernel
  outdir=$outdir/bochs-$bkey
  out=$outdir/bzImage-bochs
elif ((deb)); then
  # bump DEB_RECIPE when the packaging step changes; the name of the .deb is
  # known only after the build, so a file "deb" in the directory names it
  DEB_RECIPE=1
  outdir=$outdir/deb-$DEB_RECIPE
  out=$outdir/$(cat "$outdir/deb" 2>/dev/null || echo none)
else
  out=$outdir/bzImage
fi
say "inputs: ${#patches[@]} series patch(es), series=$series_hash key=$key variant=$variant"

if [[ -s $out ]]; then
  say "cached: $out"
  echo "$out"
  exit 0
fi

mkdir -p "$CACHE/ktree" "$outdir"
tree_root=$CACHE/ktree/$pkgver
((base)) && tree_root=$CACHE/ktree/$pkgver-base
((d13)) && tree_root=$CACHE/ktree/$pkgver-debian13
tree=$tree_root/linux
log=$outdir/build.log
: > "$log"

# One build per tree at a time (other callers wait up to 2 h); the debian13 tree is
# its own, so its long build holds only its own lock.
lock=$CACHE/ktree/$pkgver.lock
((d13)) && lock=$CACHE/ktree/$pkgver-debian13.lock
exec 9>"$lock"
flock -w 7200 9 || die "timed out waiting for the kernel tree lock $lock"

# re-check after waiting: someone else may have built it meanwhile
((deb)) && out=$outdir/$(cat "$outdir/deb" 2>/dev/null || echo none)
if [[ -s $out ]]; then say "cached: $out"; echo "$out"; exit 0; fi

G() { git -C "$tree" -c user.name=cetctl-build -c user.email=cetctl-build@localhost \
          -c core.autocrlf=false -c gc.auto=0 "$@"; }

if ! G rev-parse -q --verify refs/tags/base >/dev/null 2>&1; then
  say "extracting $TARBALL into $tree_root (one time per package version)"
  rm -rf "$tree_root"; mkdir -p "$tree_root"
  tmp=$tree_root/.extract
  mkdir -p "$tmp"
  timeout 1800 tar -xJf "$TARBALL" -C "$tmp" || die "extracting $TARBALL failed"
  mv "$tmp/$SRCPKG" "$tree"; rmdir "$tmp"
  say "creating base commit (git init + add, takes a minute)"
  G init -q
  G add -A -f >/dev/null   # -f: Debian's top-level .gitignore ignores "/*"
  G commit -q -m "$SRCPKG $pkgver (Debian)" >/dev/null
  G tag base
  rm -f "$tree/.cetctl-series"
fi

applied=$(cat "$tree/.cetctl-series" 2>/dev/null || true)
if [[ $applied != "$series_hash" ]] || ! G rev-parse -q --verify HEAD >/dev/null; then
  say "applying kernel-series (${#patches[@]} patches) on base"
  rm -f "$tree/.cetctl-series"
  G am --abort >/dev/null 2>&1 || true
  G reset -q --hard base
  G clean -fdq
  for p in "${patches[@]}"; do
    if ! G am -q --whitespace=nowarn "$SERIES_DIR/$p" >>"$log" 2>&1; then
      echo "---- git am output ----" >&2; tail -n 25 "$log" >&2
      G am --abort >/dev/null 2>&1 || true
      G reset -q --hard base
      die "patch kernel-series/$p does NOT apply on $SRCPKG $pkgver"
    fi
    say "  applied $p"
  done
  echo "$series_hash" > "$tree/.cetctl-series"
else
  # same series; drop any uncommitted change (e.g. the Bochs patch), touching only those files
  G reset -q --hard HEAD
  G clean -fdq
fi

if [[ $variant == bochs ]] || ((d13)); then
  say "applying vm/bochs/$(basename "$BOCHS_PATCH") (Bochs test build only)"
  if ! G apply --whitespace=nowarn "$BOCHS_PATCH" >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    die "vm/bochs/$(basename "$BOCHS_PATCH") does not apply on top of kernel-series"
  fi
fi

# keep our marker file out of git status / git clean
grep -qxF '/.cetctl-series' "$tree/.git/info/exclude" 2>/dev/null || echo '/.cetctl-series' >> "$tree/.git/info/exclude"

export KBUILD_BUILD_USER=cetctl KBUILD_BUILD_HOST=cetctl-build KBUILD_BUILD_TIMESTAMP="@0"
# debian13: no Rust toolchain, as in Debian's build (its config says RUSTC_VERSION=0)
mk_extra=()
((d13)) && mk_extra=(RUSTC=/nonexistent/rustc)
M() { timeout "$MAKE_TMO" make -C "$tree" -j"$JOBS" CC="ccache gcc" LOCALVERSION= "${mk_extra[@]}" "$@" >>"$log" 2>&1; }

if ((d13)); then
  say "configuring (Debian's $(basename "$D13_CONFIG"), modules: vm/debian13/kernel-builtin.list only)"
  xz -dc "$D13_CONFIG" > "$outdir/config-debian"
  bash "$D13_DIR/kernel-config.sh" prepare "$outdir/config-debian" "$D13_DIR/kernel-builtin.list" > "$tree/.config"
  M olddefconfig || { tail -n 30 "$log" >&2; die "configuration failed (log: $log)"; }
  bash "$D13_DIR/kernel-config.sh" check "$outdir/config-debian" "$D13_DIR/kernel-builtin.list" \
    "$tree/.config" > "$outdir/config-diff.txt" || die "the reduced config is not what vm/debian13/kernel-builtin.list asks (see above)"
  say "$(sed -n 3,5p "$outdir/config-diff.txt" | tr '\n' ';')"
else
say "configuring (allnoconfig + vm/kernel.config)"
M KCONFIG_ALLCONFIG="$FRAG" allnoconfig || { tail -n 30 "$log" >&2; die "configuration failed (log: $log)"; }

# Did every =y of the fragment survive Kconfig's dependency resolution?
missing=()
while IFS= read -r opt; do
  grep -qx "${opt}=y" "$tree/.config" || missing+=("$opt")
done < <(sed -n 's/^\(CONFIG_[A-Za-z0-9_]*\)=y[[:space:]]*$/\1/p' "$FRAG")
if ((${#missing[@]})); then
  say "WARNING: ${#missing[@]} option(s) set =y in vm/kernel.config are NOT =y in .config (missing dependency or not in this tree): ${missing[*]}"
fi
fi

t0=$(date +%s)
if ((deb)); then
  # bindeb-pkg writes its packages next to the tree (../); the Debian version is
  # the kernel release (a version must begin with a digit: 6.1.192-cetctl-1)
  krel=$(make -s -C "$tree" LOCALVERSION= kernelrelease 2>>"$log") || die "make kernelrelease failed (log: $log)"
  rm -f "$tree_root"/*.deb "$tree_root"/*.buildinfo "$tree_root"/*.changes
  say "building the linux-image .deb of $krel (make bindeb-pkg -j$JOBS, log $log)"
  # DPKG_FLAGS=-d: the generated control asks for build tools of module builds
  # (kmod, cpio, libssl-dev) that this config (CONFIG_MODULES=n) never runs
  if ! M KDEB_PKGVERSION="$krel-1" DPKG_FLAGS=-d bindeb-pkg; then
    grep -E 'error|Error' "$log" | tail -n 20 >&2 || true
    die "make bindeb-pkg failed after $(( $(date +%s) - t0 )) s (full log: $log)"
  fi
  shopt -s nullglob
  debs=("$tree_root"/linux-image-"$krel"_*.deb)
  ((${#debs[@]} == 1)) || die "make bindeb-pkg left ${#debs[@]} linux-image .deb(s) in $tree_root (log: $log)"
  name=$(basename "${debs[0]}")
  mv "${debs[0]}" "$outdir/$name"
  rm -f "$tree_root"/*.deb "$tree_root"/*.buildinfo "$tree_root"/*.changes
  cp "$tree/.config" "$outdir/config"
  echo "$name" > "$outdir/deb"
  say "package took $(( $(date +%s) - t0 )) s: $outdir/$name"
  echo "$outdir/$name"
  exit 0
fi

say "building bzImage (make -j$JOBS, CC='ccache gcc', log $log)"
if ! M bzImage; then
  grep -E 'error|Error' "$log" | tail -n 20 >&2 || true
  die "kernel build failed after $(( $(date +%s) - t0 )) s (full log: $log)"
fi
say "build took $(( $(date +%s) - t0 )) s"

cp "$tree/arch/x86/boot/bzImage" "$out.tmp"
cp "$tree/.config" "$outdir/config${variant/qemu/}"
if ((d13)); then
  cp "$tree/System.map" "$outdir/System.map"
  cp "$tree/include/config/kernel.release" "$outdir/release"
  # what kmod needs to know the built-in modules (depmod in the image)
  M modules.builtin >/dev/null 2>&1 || true
  for f in modules.builtin modules.builtin.modinfo; do [[ -f $tree/$f ]] && cp "$tree/$f" "$outdir/"; done
fi
mv "$out.tmp" "$out"
say "kernel $(cat "$tree/include/config/kernel.release" 2>/dev/null || echo '?') → $out"
echo "$out"
