#!/bin/sh
# expect-exit.sh CODE COMMAND [ARG...]: runs COMMAND and succeeds only when
# it exits with exactly CODE. lit tests use it as `%expect-exit 3 mlsc ...`,
# so that a command which should fail cannot pass by exiting 0 (as
# `cmd || test $? -eq 3` did).
want="$1"
shift
"$@"
got=$?
if [ "$got" -ne "$want" ]; then
  echo "expect-exit: \`$*\` exited $got, expected $want" >&2
  exit 1
fi
exit 0
