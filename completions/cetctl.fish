# fish completion for cetctl. Keep in step with `cetctl <cmd> --help`
# (tests/host/options.bats checks every long option appears here).
set -l cmds elf status audit info run map
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
complete -c cetctl -n "__fish_seen_subcommand_from elf" -s J -l json -d 'JSON output'
complete -c cetctl -n "__fish_seen_subcommand_from elf" -s o -l output -r -d 'output columns'
complete -c cetctl -n "__fish_seen_subcommand_from elf" -l list-columns -d 'list the output columns'
complete -c cetctl -n "__fish_seen_subcommand_from elf" -s n -l noheadings -d 'no headings'
complete -c cetctl -n "__fish_seen_subcommand_from elf" -l raw -d 'raw output'
complete -c cetctl -n "__fish_seen_subcommand_from elf" -s h -l help -d 'display help'
# status
complete -c cetctl -n "__fish_seen_subcommand_from status" -a '(__fish_complete_pids) self'
complete -c cetctl -n "__fish_seen_subcommand_from status" -s J -l json -d 'JSON output'
complete -c cetctl -n "__fish_seen_subcommand_from status" -s o -l output -r -d 'output columns'
complete -c cetctl -n "__fish_seen_subcommand_from status" -l list-columns -d 'list the output columns'
complete -c cetctl -n "__fish_seen_subcommand_from status" -s n -l noheadings -d 'no headings'
complete -c cetctl -n "__fish_seen_subcommand_from status" -l raw -d 'raw output'
complete -c cetctl -n "__fish_seen_subcommand_from status" -s h -l help -d 'display help'
# audit
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l user -r -d 'only processes of USER'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l comm -r -d 'only processes named COMM'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l pid -r -d 'only these pids'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l require -r -a 'shstk shstk,locked' -d 'policy'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l prometheus -r -F -d 'write textfile metrics'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -s J -l json -d 'JSON output'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -s o -l output -r -d 'output columns'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l list-columns -d 'list the output columns'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -s n -l noheadings -d 'no headings'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -l raw -d 'raw output'
complete -c cetctl -n "__fish_seen_subcommand_from audit" -s h -l help -d 'display help'
# info
complete -c cetctl -n "__fish_seen_subcommand_from info" -s J -l json -d 'JSON output'
complete -c cetctl -n "__fish_seen_subcommand_from info" -s o -l output -r -a 'NAME VALUE DETAIL' -d 'output columns'
complete -c cetctl -n "__fish_seen_subcommand_from info" -l list-columns -d 'list the output columns'
complete -c cetctl -n "__fish_seen_subcommand_from info" -s n -l noheadings -d 'no headings'
complete -c cetctl -n "__fish_seen_subcommand_from info" -l raw -d 'raw output'
complete -c cetctl -n "__fish_seen_subcommand_from info" -s h -l help -d 'display help'
# run
complete -c cetctl -n "__fish_seen_subcommand_from run" -s s -l shstk -d 'enable shadow stacks'
complete -c cetctl -n "__fish_seen_subcommand_from run" -s w -l wrss -d 'enable WRSS (implies --shstk)'
complete -c cetctl -n "__fish_seen_subcommand_from run" -l lock -d 'lock the features (default)'
complete -c cetctl -n "__fish_seen_subcommand_from run" -l no-lock -d 'leave the features unlocked'
complete -c cetctl -n "__fish_seen_subcommand_from run" -s m -l method -r -a 'ptrace glibc auto' -d 'how to enable'
complete -c cetctl -n "__fish_seen_subcommand_from run" -s q -l quiet -d 'no warnings'
complete -c cetctl -n "__fish_seen_subcommand_from run" -l no-preload -d 'no setjmp/longjmp preload library'
complete -c cetctl -n "__fish_seen_subcommand_from run" -l trace-only -d 'traced start-up that enables nothing (tests)'
complete -c cetctl -n "__fish_seen_subcommand_from run" -s h -l help -d 'display help'
# map
complete -c cetctl -n "__fish_seen_subcommand_from map" -s s -l size -r -d 'size in bytes'
complete -c cetctl -n "__fish_seen_subcommand_from map" -s a -l addr -r -d 'address'
complete -c cetctl -n "__fish_seen_subcommand_from map" -s t -l token -d 'place a restore token'
complete -c cetctl -n "__fish_seen_subcommand_from map" -l hold -r -d 'keep mapped for SECS'
complete -c cetctl -n "__fish_seen_subcommand_from map" -s p -l pivot -d 'switch onto it and back'
complete -c cetctl -n "__fish_seen_subcommand_from map" -s J -l json -d 'JSON output'
complete -c cetctl -n "__fish_seen_subcommand_from map" -s h -l help -d 'display help'
