# complete.sh SCRIPT WORDS...: sources the bash completion SCRIPT and prints
# what it offers for the last of WORDS, sorted, on one line.
. "$1"
shift
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
_mlsc
printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
echo
