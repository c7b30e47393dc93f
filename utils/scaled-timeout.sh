#!/bin/sh
# scaled-timeout.sh SCALE SECONDS COMMAND [ARG...]: runs COMMAND under
# `timeout` with SECONDS x SCALE. lit tests write `%timeout 8 mlsc ...`;
# lit.cfg.py passes SCALE 1 for a Release build and a larger one under the
# sanitizers, whose Debug + AddressSanitizer build runs about ten times
# slower (a bound that catches a hang in Release must not fail a correct
# sanitizer run on a loaded two-core machine).
scale="$1"
seconds="$2"
shift 2
exec timeout "$((seconds * scale))" "$@"
