#!/bin/bash
# vm/debian13/kernel-config.sh — the configuration of the debian13 tier's kernel: Debian's own
# 6.12 config (package linux-config-6.12) with the few modules a Bochs guest needs to boot
# built in, nothing else changed. The other modules stay =m in the config, so that every
# =y of Debian's (including what only a module selects: devlink, KVM's helpers, ...)
# stays =y and vmlinux is built as Debian builds it; only `make bzImage` runs, so none of
# them is built (Debian builds ~4000).
#
#   kernel-config.sh prepare DEBIAN_CONFIG LIST   Debian's config on stdout, the =m options
#                                                 LIST names (vm/debian13/kernel-builtin.list)
#                                                 turned =y
#   kernel-config.sh check DEBIAN_CONFIG LIST CONFIG
#                                                 after `make olddefconfig`: the summary of
#                                                 what differs from Debian's config on stdout;
#                                                 exit 1 when a LIST option is not =y or an
#                                                 =y of Debian's is not =y any more
#
# vm/build-kernel.sh --debian13 runs prepare, olddefconfig, check, and keeps the summary
# next to the kernel (config-diff.txt); vm/debian13/README.md explains it.
set -euo pipefail

die() { echo "kernel-config: $*" >&2; exit 1; }

# listed LIST: the option names of LIST (first word of each non-comment line)
listed() { sed -n 's/^\(CONFIG_[A-Za-z0-9_]*\).*/\1/p' "$1"; }

# values CONFIG: "NAME<tab>VALUE" for every set option, "NAME<tab>n" for "is not set"
values() {
	sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=\(.*\)$/\1\t\2/p' \
	       -e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1\tn/p' "$1" | sort
}

case ${1:-} in
prepare)
	(($# == 3)) || die "usage: kernel-config.sh prepare DEBIAN_CONFIG LIST"
	[[ -s $2 && -s $3 ]] || die "$2 or $3 missing"
	awk -v list="$(listed "$3" | tr '\n' ' ')" '
		BEGIN { n = split(list, l, " "); for (i = 1; i <= n; i++) keep[l[i]] = 1 }
		/^CONFIG_[A-Za-z0-9_]*=m$/ {
			name = substr($0, 1, length($0) - 2)
			if (name in keep) { print name "=y"; next }
		}
		{ print }' "$2"
	;;
check)
	(($# == 4)) || die "usage: kernel-config.sh check DEBIAN_CONFIG LIST CONFIG"
	deb=$2 list=$3 cfg=$4
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	values "$deb" > "$tmp/deb"
	values "$cfg" > "$tmp/ours"
	bad=0
	while read -r o; do
		grep -qx "$o=y" "$cfg" || { echo "ERROR: $o (in $(basename "$list")) is not =y" >&2; bad=1; }
	done < <(listed "$list")
	# by value: y, m, n (or absent), or anything else (strings, numbers)
	awk -F'\t' '$2 == "y" { print $1 }' "$tmp/deb" > "$tmp/deb.y"
	awk -F'\t' '$2 == "m" { print $1 }' "$tmp/deb" > "$tmp/deb.m"
	awk -F'\t' '$2 == "y" { print $1 }' "$tmp/ours" > "$tmp/ours.y"
	comm -23 "$tmp/deb.y" "$tmp/ours.y" > "$tmp/lost"
	comm -13 "$tmp/deb.y" "$tmp/ours.y" > "$tmp/gained"
	comm -12 "$tmp/deb.m" "$tmp/ours.y" > "$tmp/built-in"
	if [[ -s $tmp/lost ]]; then
		echo "ERROR: =y in Debian's config, not =y here: $(tr '\n' ' ' < "$tmp/lost")" >&2
		bad=1
	fi
	# non-tristate values that differ (strings, numbers), both sides shown
	join -t $'\t' -j1 -a1 -a2 -e '(absent)' -o 0,1.2,2.2 \
		<(awk -F'\t' '$2 != "y" && $2 != "m" && $2 != "n"' "$tmp/deb") \
		<(awk -F'\t' '$2 != "y" && $2 != "m" && $2 != "n"' "$tmp/ours") |
		awk -F'\t' '$2 != $3 { print $1 ": " $2 " -> " $3 }' > "$tmp/values"
	echo "Debian's config: $(wc -l < "$tmp/deb.y") =y, $(wc -l < "$tmp/deb.m") =m ($(basename "$deb"))"
	echo "this kernel:     $(wc -l < "$tmp/ours.y") =y, $(grep -c '=m$' "$cfg" || true) =m (none of them built: make bzImage only)"
	echo "=y of Debian's kept as =y: $(comm -12 "$tmp/deb.y" "$tmp/ours.y" | wc -l) of $(wc -l < "$tmp/deb.y")"
	echo "modules built in (=m -> =y, $(wc -l < "$tmp/built-in")): $(tr '\n' ' ' < "$tmp/built-in")"
	echo "=y gained ($(wc -l < "$tmp/gained"); the modules built in, what they select, or new defaults): $(tr '\n' ' ' < "$tmp/gained")"
	echo "=y lost ($(wc -l < "$tmp/lost")): $(tr '\n' ' ' < "$tmp/lost")"
	echo "other values that differ ($(wc -l < "$tmp/values"); NAME: DEBIAN'S -> OURS):"
	sed 's/^/  /' "$tmp/values"
	exit "$bad"
	;;
*)
	die "usage: kernel-config.sh prepare|check ... (see the header)"
	;;
esac
