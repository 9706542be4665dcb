# bash completion for cetctl                                 -*- shell-script -*-
# Each subcommand has one line of options below; keep it in step with
# `cetctl <cmd> --help` and man/cetctl-<cmd>.1 (tests/host/options.bats checks).

# _cetctl_list WORDS: complete the last element of a comma separated list
# in $cur from WORDS (the elements already given are kept as a prefix).
_cetctl_list()
{
	local prefix="" last=$cur
	if [[ $cur == *,* ]]; then
		prefix=${cur%,*},
		last=${cur##*,}
	fi
	[[ $prefix == "" && $last == +* ]] && { prefix=+; last=${last#+}; }
	COMPREPLY=($(compgen -P "$prefix" -W "$1" -- "$last"))
	# more may follow: no space after a completed element
	compopt -o nospace 2>/dev/null
}

_cetctl()
{
	local cur prev words cword
	_init_completion || return

	local cmds="elf status audit info run map"
	local global_opts="--json --proc-root --help --version"
	local cmd="" cmdi=0 i
	for ((i = 1; i < cword; i++)); do
		case "${words[i]}" in
		--proc-root) ((i++)) ;;
		-*) ;;
		*) cmd="${words[i]}"; cmdi=$i; break ;;
		esac
	done

	# run [OPTIONS] [--] PROG ARGS: from PROG on, PROG's own completion
	if [[ $cmd == run ]]; then
		for ((i = cmdi + 1; i < cword; i++)); do
			case "${words[i]}" in
			--) ((i++)); break ;;
			-m|--method) ((i++)) ;;
			-*) ;;
			*) break ;;
			esac
		done
		if ((i < cword)) || [[ ${words[i-1]} == -- ]] ||
		   [[ $cur != -* && $prev != -m && $prev != --method ]]; then
			_command_offset $i
			return
		fi
	fi

	local opts
	case "$cmd" in
	"") opts="$global_opts"
	    if [[ $prev == --proc-root ]]; then _filedir -d; return; fi
	    if [[ $cur != -* ]]; then COMPREPLY=($(compgen -W "$cmds" -- "$cur")); return; fi ;;
	elf)    opts="--recursive --deps --compat --kernel-policy --json --output --list-columns --noheadings --raw --help --version"
	        if [[ $prev == --kernel-policy ]]; then COMPREPLY=($(compgen -W "block allow none" -- "$cur")); return; fi ;;
	status) opts="--json --output --list-columns --noheadings --raw --help --version" ;;
	audit)  opts="--user --comm --unit --pid --require --prometheus --label --json --output --list-columns --noheadings --raw --help --version"
	        case $prev in
	        --user) COMPREPLY=($(compgen -u -- "$cur")); return ;;
	        --require) _cetctl_list "shstk wrss locked"; return ;;
	        --comm) _cetctl_list "$(cat /proc/[0-9]*/comm 2>/dev/null | sort -u)"; return ;;
	        --unit) _cetctl_list "$(systemctl list-units --all --plain --no-legend 2>/dev/null | cut -d' ' -f1)"; return ;;
	        --pid) _cetctl_list "$(command ls /proc 2>/dev/null | grep -E '^[0-9]+$')"; return ;;
	        --prometheus) _filedir prom; return ;;
	        --label) return ;;
	        esac ;;
	info)   opts="--json --output --list-columns --noheadings --raw --help --version" ;;
	run)    opts="--shstk --wrss --lock --no-lock --method --quiet --no-preload --trace-only --force-incompatible --help --version"
	        if [[ $prev == --method || $prev == -m ]]; then COMPREPLY=($(compgen -W "ptrace glibc auto" -- "$cur")); return; fi ;;
	map)    opts="--size --addr --token --hold --pivot --json --help --version"
	        case $prev in -s|--size|-a|--addr|--hold) return ;; esac ;;
	esac

	# -o/--output: the command's own column names, a comma separated list
	case "$cmd" in
	elf|status|audit|info)
		if [[ $prev == -o || $prev == --output ]]; then
			_cetctl_list "$(cetctl "$cmd" --list-columns -n --raw 2>/dev/null |
				awk '{ print $1 }')"
			return
		fi ;;
	esac

	case "$cmd" in
	elf) if [[ $cur != -* ]]; then _filedir; return; fi ;;
	status) if [[ $cur != -* ]]; then COMPREPLY=($(compgen -W "self $(command ls /proc 2>/dev/null | grep -E '^[0-9]+$')" -- "$cur")); return; fi ;;
	esac
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -F _cetctl cetctl
