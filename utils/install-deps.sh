#!/bin/sh
# Installs the Debian packages named on the command line that are missing.
# As root it runs apt-get; otherwise it prints the command and fails.
set -eu
missing=""
for pkg in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $pkg"
  fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != "0" ]; then
  echo "mlsc: these Debian packages are missing:$missing" >&2
  echo "mlsc: run as root:  apt-get update && apt-get install -y --no-install-recommends$missing" >&2
  exit 1
fi
echo "mlsc: installing:$missing"
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
