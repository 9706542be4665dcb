# shellcheck shell=bash
# vm/lib.sh — what vm/run-qemu.sh and vm/run-bochs.sh share: the options every guest
# runner takes, the guest's cetctl.* command line, and the final verdict. Sourced, not run.
#
# The caller sets its defaults first (log, tmo, tier), then for each argument calls
# runner_option "$@": it takes a common option and sets RUNNER_SHIFT to the number of
# words used, or sets RUNNER_SHIFT=0 for the caller's own options and KERNEL INITRD.
#
#   --log FILE  --timeout SECS  --filter REGEX  --suites a,b  --append "ARGS" (repeatable)
#   --tier NAME  --label NAME  --allow ERE (repeatable)  --no-parse
filter='' suites='' append='' parse=1 label=''
allow=()

# shellcheck disable=SC2034  # log, tmo: the caller's variables
runner_option() {
  RUNNER_SHIFT=2
  case $1 in
    --log|--timeout|--filter|--suites|--append|--tier|--label|--allow)
      (($# >= 2)) || die "option $1 needs a value" ;;
  esac
  case $1 in
    --log) log=$2 ;;
    --timeout) [[ $2 =~ ^[1-9][0-9]*$ ]] || die "--timeout needs seconds, not '$2'"; tmo=$2 ;;
    --filter) filter=$2 ;;
    --suites) suites=$2 ;;
    --append) append+=" $2" ;;
    --tier) tier=$2 ;;
    --label) label=$2 ;;
    --allow) allow+=(--allow "$2") ;;
    --no-parse) parse=0; RUNNER_SHIFT=1 ;;
    *) RUNNER_SHIFT=0 ;;
  esac
}

# The guest's part of the kernel command line (vm/guest-init reads cetctl.*).
runner_guest_cmdline() {
  local c="cetctl.tier=$tier"
  [[ -n $filter ]] && c+=" cetctl.filter=$filter"
  [[ -n $suites ]] && c+=" cetctl.suites=$suites"
  [[ -n $append ]] && c+=" ${append# }"
  printf '%s\n' "$c"
}

# runner_verdict LOG: judge the run with vm/parse-results.sh (its exit status), or with
# --no-parse only whether the guest reached its final marker.
runner_verdict() {
  if ((parse)); then
    exec "$REPO/vm/parse-results.sh" "$1" "${label:-$tier}" "${allow[@]}"
  fi
  grep -qa 'CETCTL-GUEST-DONE' "$1"
}
