#!/bin/bash
# vm/build-glibc-cet.sh — build Debian 13 (trixie)'s glibc 2.41 WITH CET, for the guest.
#
#   vm/build-glibc-cet.sh [--cached-only]
#
# Why: Debian 12's glibc 2.36 and Debian 13's 2.41 are both built without --enable-cet,
# so neither manages shadow stacks; the guest suite glibc-cet.bats needs a glibc that
# does (as Fedora's would) to show why a process runs without one. 2.36's CET code is
# not usable here anyway: it predates the mainline arch_prctl numbers our kernel has.
#
# Source: the glibc source package of trixie, fetched with `apt-get source` through a
# PRIVATE apt configuration (a deb-src line for trixie in a temporary directory; the
# machine's apt sources are not touched). The newest 2.41 version the mirror serves is
# taken; apt checks it against trixie's signed Release file, dpkg-source against the
# .dsc. Debian's patches are applied (dpkg-source -x), then it is configured with
#   --prefix=/opt/glibc-cet --enable-cet (and no nscd, profiling or timezone tools)
# and installed with DESTDIR, so the tree works at /opt/glibc-cet in the guest
# (loader /opt/glibc-cet/lib/ld-linux-x86-64.so.2). Nothing is installed on the host.
# Build dependencies: gcc >= 12.1, binutils >= 2.39, gawk, bison, python3, make
# (Debian 12 has them; vm/install-deps.sh). Run with nice -n 15: the machine is shared.
#
# Output (the LAST line of stdout): a directory with
#   root/opt/glibc-cet/   the installed tree (lib/, include/, ...)
#   VERSION               the Debian source version built
#   BUILD-SECONDS         how long configure + make + install took
#   build.log
# Cached in ${CETCTL_CACHE:-$HOME/.cache/cetctl}/glibc-cet-<key> (key: the recipe
# below, RECIPE_REVISION, gcc and binutils versions; not the Debian revision, which
# the mirror decides: VERSION says which one was built); "cached" when it exists.
# The build is long (hours on 2 shared cores under nice -n 15; BUILD-SECONDS),
# so the guest suite that needs it is opt-in unless it is cached.
# --cached-only: print the cached directory, or exit 1 without building.
# An interrupted build resumes: <dir>.work keeps the configured tree (and its
# VERSION), and make goes on where it stopped. A lock keeps two runs apart.
# Env: CETCTL_CACHE, CETCTL_JOBS (default: nproc), CETCTL_GLIBC_VERSION (a Debian
# version to take instead of the newest 2.41 one).
set -euo pipefail

die() { echo "build-glibc-cet: ERROR: $*" >&2; exit 1; }
say() { echo "build-glibc-cet: $*" >&2; }

CACHE=${CETCTL_CACHE:-$HOME/.cache/cetctl}
PREFIX=/opt/glibc-cet
SUITE=trixie
UPSTREAM=2.41
# bump when the way of building changes without the configure line changing
RECIPE_REVISION=1
CONFIGURE=(--prefix="$PREFIX" --enable-cet --disable-werror --disable-profile --disable-nscd
           --disable-build-nscd --disable-timezone-tools --without-selinux)
cached_only=0
case "${1:-}" in
  --cached-only) cached_only=1; shift ;;
  -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
esac
[[ $# -eq 0 ]] || die "unknown argument '$1' (usage: vm/build-glibc-cet.sh [--cached-only])"

for t in gcc ld make gawk bison python3 apt-get dpkg-source; do
  command -v $t >/dev/null || die "'$t' missing: run vm/install-deps.sh"
done
key=$( { echo "$SUITE $UPSTREAM $RECIPE_REVISION ${CONFIGURE[*]}"; gcc --version | head -n1
         ld --version | head -n1; } | sha256sum | cut -c1-16)
out=$CACHE/glibc-cet-$key
if [[ -x $out/root$PREFIX/lib/ld-linux-x86-64.so.2 && -f $out/VERSION ]]; then
  say "cached: $out ($(cat "$out/VERSION"))"
  echo "$out"
  exit 0
fi
((cached_only)) && { say "not cached ($out)"; exit 1; }

# Fetch the source through a private apt (its own sources list, lists and cache
# under the work directory), unpack it with Debian's patches, configure it.
fetch_and_configure() {
  rm -rf "$work"
  mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/src"
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  [[ -f $keyring ]] || die "$keyring missing (package debian-archive-keyring)"
  echo "deb-src [signed-by=$keyring] http://deb.debian.org/debian $SUITE main" >"$work/apt/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache"
            -o APT::Sandbox::User=root)
  say "reading $SUITE's source index (private apt configuration in $work/apt)"
  apt-get "${apt_opts[@]}" update >"$work/apt.log" 2>&1 ||
    { tail -n 5 "$work/apt.log" >&2; die "apt-get update for $SUITE's deb-src failed"; }
  if [[ -n ${CETCTL_GLIBC_VERSION:-} ]]; then
    versions=$CETCTL_GLIBC_VERSION
  else
    # the index can list versions the mirror no longer serves: newest first, take the
    # first one that downloads
    versions=$(apt-cache "${apt_opts[@]}" showsrc glibc | sed -n 's/^Version: //p' |
               grep -E "^$UPSTREAM-" | sort -rV | uniq)
  fi
  [[ -n $versions ]] || die "$SUITE's source index has no glibc $UPSTREAM"
  version=''
  for v in $versions; do
    if (cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only "glibc=$v") >>"$work/apt.log" 2>&1; then
      version=$v
      break
    fi
    say "glibc $v is listed but not served; trying an older one"
  done
  [[ -n $version ]] || { tail -n 5 "$work/apt.log" >&2; die "no glibc $UPSTREAM source could be fetched from $SUITE"; }
  dsc=$work/src/glibc_${version#*:}.dsc
  [[ -f $dsc ]] || die "$dsc missing after apt-get source"
  say "unpacking glibc $version (Debian's patches applied)"
  dpkg-source -x "$dsc" "$work/src/glibc" >"$work/dpkg-source.log" 2>&1 ||
    { tail -n 5 "$work/dpkg-source.log" >&2; die "dpkg-source -x $dsc failed"; }

  mkdir -p "$work/build"
  say "configuring with --prefix=$PREFIX --enable-cet (log $log)"
  (cd "$work/build" && nice -n 15 "$work/src/glibc/configure" "${CONFIGURE[@]}" \
     --with-pkgversion="cetctl test build of Debian GLIBC $version with CET") >"$log" 2>&1 ||
    { tail -n 30 "$log" >&2; die "configure failed (see $log)"; }
  grep -q '^enable-cet = yes' "$work/build/config.make" ||
    die "configure did not take --enable-cet (config.make: $(grep '^enable-cet' "$work/build/config.make"))"
  echo "$version" >"$work/VERSION"
}

mkdir -p "$CACHE"
exec 9>"$CACHE/glibc-cet.lock"
flock 9
jobs=${CETCTL_JOBS:-$(nproc)}
work=$out.work
log=$work/build.log
t0=$SECONDS
if [[ -f $work/build/config.make && -s $work/VERSION ]]; then
  version=$(cat "$work/VERSION")
  say "resuming the build of glibc $version in $work (log $log)"
  [[ -f $work/BUILD-SECONDS ]] && t0=$((SECONDS - $(cat "$work/BUILD-SECONDS")))
else
  fetch_and_configure
fi
say "building (nice -n 15 make -j$jobs)"
nice -n 15 make -C "$work/build" -j"$jobs" >>"$log" 2>&1 ||
  { echo $((SECONDS - t0)) >"$work/BUILD-SECONDS"; tail -n 30 "$log" >&2
    die "glibc build failed (see $log; run again to resume)"; }
stage=$out.stage
rm -rf "$stage"
mkdir -p "$stage/root"
nice -n 15 make -C "$work/build" install DESTDIR="$stage/root" >>"$log" 2>&1 ||
  { tail -n 30 "$log" >&2; die "glibc install failed (see $log)"; }
secs=$((SECONDS - t0))
[[ -x $stage/root$PREFIX/lib/ld-linux-x86-64.so.2 ]] ||
  die "the install has no $PREFIX/lib/ld-linux-x86-64.so.2"
echo "$version" >"$stage/VERSION"
echo "$secs" >"$stage/BUILD-SECONDS"
cp "$log" "$stage/build.log"
rm -rf "$out"
mv "$stage" "$out"
rm -rf "$work"
say "built glibc $version with CET in $secs s: $out"
echo "$out"
