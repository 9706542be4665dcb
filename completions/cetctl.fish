# fish completion for cetctl. Keep in step with `cetctl <cmd> --help`
# (tests/host/options.bats checks every long option appears here).
set -l cmds elf status audit info run map

# __cetctl_list WORD...: the words as the next element of the comma
# separated list being typed (-o columns, --require features)
function __cetctl_list
    set -l cur (commandline -ct)
    # an empty list would make $prefix$w empty too: always one element
    set -l prefix (string match -r '^.*,' -- $cur; or string match -r '^\+' -- $cur; or echo '')
    for w in $argv
        echo $prefix$w
    end
end

# __cetctl_columns: the column names of the subcommand on the line
function __cetctl_columns
    set -l words (commandline -opc)
    for c in elf status audit info
        if contains -- $c $words
            __cetctl_list (cetctl $c --list-columns -n --raw 2>/dev/null | string replace -r '\s.*' '')
            return
        end
    end
end

# __cetctl_run_prog: the index in (commandline -opc) of the program that
# run starts (after run's options and an optional --), nothing before it
function __cetctl_run_prog
    set -l words (commandline -opc)
    set -l i (contains -i -- run $words); or return 1
    set i (math $i + 1)
    while test $i -le (count $words)
        switch $words[$i]
            case --
                set i (math $i + 1)
                break
            case -m --method
                set i (math $i + 2)
            case '-*'
                set i (math $i + 1)
            case '*'
                break
        end
    end
    test $i -le (count $words); or return 1
    echo $i
end

# run [OPTIONS] [--] PROG ARGS: PROG's own completion from there on
function __cetctl_run_complete
    set -l words (commandline -opc)
    set -l i (__cetctl_run_prog); or return
    complete -C (string join ' ' -- (string escape -- $words[$i..-1]) (commandline -ct))
end

complete -c cetctl -f
complete -c cetctl -n "not __fish_seen_subcommand_from $cmds" -a "$cmds"
complete -c cetctl -n "not __fish_seen_subcommand_from $cmds" -s J -l json -d 'JSON output'
complete -c cetctl -n "not __fish_seen_subcommand_from $cmds" -l proc-root -r -d 'read process information from DIR'
complete -c cetctl -n "not __fish_seen_subcommand_from $cmds" -s h -l help -d 'display help'
complete -c cetctl -n "not __fish_seen_subcommand_from $cmds" -s V -l version -d 'display version'
# elf
complete -c cetctl -n "__fish_seen_subcommand_from elf" -F
complete -c cetctl -n "__fish_seen_subcommand_from elf" -s r -l recursive -d 'walk directories'
complete -c cetctl -n "__fish_seen_subcommand_from elf" -l deps -d 'judge the DT_NEEDED closure'
complete -c cetctl -n "__fish_seen_subcommand_from elf" -l compat -d 'can run --shstk run it (COMPAT column)'
complete -c cetctl -n "__fish_seen_subcommand_from elf" -l kernel-policy -x -a 'block allow none' -d 'judge KERNEL for this legacy-ELF policy'
complete -c cetctl -n "__fish_seen_subcommand_from elf" -s J -l json -d 'JSON output'
complete -c cetctl -n "__fish_seen_subcommand_from elf" -s o -l output -x -a '(__cetctl_columns)' -d 'output columns'
complete -c cetctl -n "__fish_seen_subcommand_from elf" -l list-columns -d 'list the output columns'
complete -c cetctl -n "__fish_seen_subcommand_from elf" -s n -l noheadings -d 'no headings'
complete -c cetctl -n "__fish_seen_subcommand_from elf" -l raw -d 'raw output'
complete -c cetctl -n "__fish_seen_subcommand_from elf" -s h -l help -d 'display help'
complete -c cetctl -n "__fish_seen_subcommand_from elf" -s V -l version -d 'display version'
# status
complete -c cetctl -n "__fish_seen_subcommand_from status" -a '(__fish_complete_pids) self'
complete -c cetctl -n "__fish_seen_subcommand_from status" -s J -l json -d 'JSON output'
complete -c cetctl -n "__fish_seen_subcommand_from status" -s o -l output -x -a '(__cetctl_columns)' -d 'output columns'
complete -c cetctl -n "__fish_seen_subcommand_from status" -l list-columns -d 'list the output columns'
complete -c cetctl -n "__fish_seen_subcommand_from status" -s n -l noheadings -d 'no headings'
complete -c cetctl -n "__fish_seen_subcommand_from status" -l raw -d 'raw output'
complete -c cetctl -n "__fish_seen_subcommand_from status" -s h -l help -d 'display help'
complete -c cetctl -n "__fish_seen_subcommand_from status" -s V -l version -d 'display version'
# audit
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l user -x -a '(__fish_complete_users)' -d 'only processes of USER'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l comm -x -a '(__cetctl_list (__fish_complete_proc))' -d 'only processes named COMM'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l unit -x -a '(__cetctl_list (systemctl list-units --all --plain --no-legend 2>/dev/null | string split -f1 " "))' -d 'only processes in these systemd units'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l pid -x -a '(__cetctl_list (__fish_complete_pids | string replace -r "\t.*" ""))' -d 'only these pids'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l require -x -a '(__cetctl_list shstk wrss locked)' -d 'policy'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l prometheus -r -F -d 'write textfile metrics'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l label -x -d 'add a metrics label NAME=VALUE'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -s J -l json -d 'JSON output'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -s o -l output -x -a '(__cetctl_columns)' -d 'output columns'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l list-columns -d 'list the output columns'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -s n -l noheadings -d 'no headings'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l raw -d 'raw output'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -s h -l help -d 'display help'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -s V -l version -d 'display version'
# info
complete -c cetctl -n "__fish_seen_subcommand_from info" -s J -l json -d 'JSON output'
complete -c cetctl -n "__fish_seen_subcommand_from info" -s o -l output -x -a '(__cetctl_columns)' -d 'output columns'
complete -c cetctl -n "__fish_seen_subcommand_from info" -l list-columns -d 'list the output columns'
complete -c cetctl -n "__fish_seen_subcommand_from info" -s n -l noheadings -d 'no headings'
complete -c cetctl -n "__fish_seen_subcommand_from info" -l raw -d 'raw output'
complete -c cetctl -n "__fish_seen_subcommand_from info" -s h -l help -d 'display help'
complete -c cetctl -n "__fish_seen_subcommand_from info" -s V -l version -d 'display version'
# run: the program (a command name), then its own completion
complete -c cetctl -n "__fish_seen_subcommand_from run; and not __cetctl_run_prog >/dev/null" -a '(__fish_complete_command)'
complete -c cetctl -n "__fish_seen_subcommand_from run; and __cetctl_run_prog >/dev/null" -x -a '(__cetctl_run_complete)'
complete -c cetctl -n "__fish_seen_subcommand_from run" -s s -l shstk -d 'enable shadow stacks'
complete -c cetctl -n "__fish_seen_subcommand_from run" -s w -l wrss -d 'enable WRSS (implies --shstk)'
complete -c cetctl -n "__fish_seen_subcommand_from run" -l lock -d 'lock the features (default)'
complete -c cetctl -n "__fish_seen_subcommand_from run" -l no-lock -d 'leave the features unlocked'
complete -c cetctl -n "__fish_seen_subcommand_from run" -s m -l method -r -a 'ptrace glibc auto' -d 'how to enable'
complete -c cetctl -n "__fish_seen_subcommand_from run" -s q -l quiet -d 'no warnings'
complete -c cetctl -n "__fish_seen_subcommand_from run" -l no-preload -d 'no setjmp/longjmp preload library'
complete -c cetctl -n "__fish_seen_subcommand_from run" -l trace-only -d 'traced start-up that enables nothing (tests)'
complete -c cetctl -n "__fish_seen_subcommand_from run" -l force-incompatible -d 'run a program known not to survive a shadow stack'
complete -c cetctl -n "__fish_seen_subcommand_from run" -s h -l help -d 'display help'
complete -c cetctl -n "__fish_seen_subcommand_from run" -s V -l version -d 'display version'
# map
complete -c cetctl -n "__fish_seen_subcommand_from map" -s s -l size -r -d 'size in bytes'
complete -c cetctl -n "__fish_seen_subcommand_from map" -s a -l addr -r -d 'address'
complete -c cetctl -n "__fish_seen_subcommand_from map" -s t -l token -d 'place a restore token'
complete -c cetctl -n "__fish_seen_subcommand_from map" -l hold -r -d 'keep mapped for SECS'
complete -c cetctl -n "__fish_seen_subcommand_from map" -s p -l pivot -d 'switch onto it and back'
complete -c cetctl -n "__fish_seen_subcommand_from map" -s J -l json -d 'JSON output'
complete -c cetctl -n "__fish_seen_subcommand_from map" -s h -l help -d 'display help'
complete -c cetctl -n "__fish_seen_subcommand_from map" -s V -l version -d 'display version'
