#!/usr/bin/zsh -f
# zsh-complete.zsh COMPLETIONS_DIR PATH_DIR 'WORDS ' — the matches zsh's completion
# system offers for the command line WORDS (completing after its end), one per line.
#
# A real interactive zsh runs on a pseudo-terminal (zsh/zpty) with compinit and
# the completion functions of COMPLETIONS_DIR first in fpath, and PATH_DIR first
# in PATH (where `cetctl` is the build under test). compadd is wrapped to record
# every match the completion functions add, after zsh's own filtering by the word
# being completed; a key bound to a widget of ours runs complete-word and then
# writes an end marker, so the script knows when completion has finished.
# Exit status 1 when the marker does not come within 20 s.
emulate -L zsh
zmodload zsh/zpty || exit 2

local compdir=$1 pathdir=$2 line=$3
local out=${TMPDIR:-/tmp}/zsh-complete.$$
: >| $out

# the child's set-up, sent as one line each (no prompt, no rc files: -f)
local -a setup=(
	"PS1='' PROMPT='' RPROMPT='' PROMPT_EOL_MARK=''"
	"fpath=(${(q)compdir} \$fpath) PATH=${(q)pathdir}:\$PATH"
	"autoload -Uz compinit && compinit -u -D"
	"zstyle ':completion:*' menu no"
	"unsetopt beep list_beep auto_menu auto_list"
	"__out=${(q)out}"
	"compadd() { if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd \"\$@\"; return; fi; local -a __h; builtin compadd -A __h \"\$@\"; (( \$#__h )) && print -rl -- \$__h >>| \$__out; builtin compadd \"\$@\" }"
	"__done() { zle complete-word; print -r -- __END__ >>| \$__out; zle kill-whole-line }"
	"zle -N __done; bindkey '^X' __done"
)

zpty -b cz zsh -f -i || exit 2
local s
for s in $setup; do
	zpty -w cz "$s"
done
# the line, then the key (no newline: the line is never run)
zpty -w -n cz "$line"$'\x18'

local i
for i in {1..200}; do
	grep -q '^__END__$' $out 2>/dev/null && break
	sleep 0.1
done
zpty -d cz
if ! grep -q '^__END__$' $out; then
	rm -f $out
	print -u2 "zsh-complete: no answer for '$line'"
	exit 1
fi
grep -v '^__END__$' $out | sort -u
rm -f $out
