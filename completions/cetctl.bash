# bash completion for cetctl                                 -*- shell-script -*-
# Each subcommand has one line of options below; keep it in step with
# `cetctl <cmd> --help` and man/cetctl-<cmd>.1 (tests/host/options.bats checks).

_cetctl()
{
	local cur prev words cword
	_init_completion || return

	local cmds="elf status audit info run map"
	local global_opts="--json --proc-root --help --version"
	local cmd="" i
	for ((i = 1; i < cword; i++)); do
		case "${words[i]}" in
		--proc-root) ((i++)) ;;
		-*) ;;
		*) cmd="${words[i]}"; break ;;
		esac
	done

	local opts
	case "$cmd" in
	"") opts="$global_opts"
	    if [[ $prev == --proc-root ]]; then _filedir -d; return; fi
	    if [[ $cur != -* ]]; then COMPREPLY=($(compgen -W "$cmds" -- "$cur")); return; fi ;;
	elf)    opts="--recursive --deps --kernel-policy --json --output --list-columns --noheadings --raw --help --version"
	        if [[ $prev == --kernel-policy ]]; then COMPREPLY=($(compgen -W "block allow none" -- "$cur")); return; fi ;;
	status) opts="--json --output --list-columns --noheadings --raw --help --version" ;;
	audit)  opts="--user --comm --pid --require --prometheus --label --json --output --list-columns --noheadings --raw --help --version" ;;
	info)   opts="--json --output --list-columns --noheadings --raw --help --version" ;;
	run)    opts="--shstk --wrss --lock --no-lock --method --quiet --no-preload --trace-only --help --version"
	        if [[ $prev == --method || $prev == -m ]]; then COMPREPLY=($(compgen -W "ptrace glibc auto" -- "$cur")); return; fi ;;
	map)    opts="--size --addr --token --hold --pivot --json --help --version" ;;
	esac

	# -o/--output: the command's own column names
	case "$cmd" in
	elf|status|audit|info)
		if [[ $prev == -o || $prev == --output ]]; then
			COMPREPLY=($(compgen -W "$(cetctl "$cmd" --list-columns -n --raw 2>/dev/null |
				awk '{ print $1 }')" -- "$cur"))
			return
		fi ;;
	esac

	case "$cmd" in
	elf) if [[ $cur != -* ]]; then _filedir; return; fi ;;
	status) if [[ $cur != -* ]]; then COMPREPLY=($(compgen -W "self $(command ls /proc 2>/dev/null | grep -E '^[0-9]+$')" -- "$cur")); return; fi ;;
	run) if [[ $prev == -- || $cword -gt 2 && ${words[cword-1]} != -* && $cur != -* ]]; then _command_offset $cword; return; fi ;;
	esac
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -F _cetctl cetctl
