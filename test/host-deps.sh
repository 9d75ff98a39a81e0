#!/usr/bin/env bash
# Installs the Debian packages the tests, the demo and the e2e start for real, when their commands are
# missing: `make test` / `make demo` / `make e2e` need nothing set up by hand. Arguments: command:package pairs.
set -euo pipefail
missing=()
for pair in "$@"; do
  cmd=${pair%%:*}
  pkg=${pair#*:}
  # systemd's helpers (systemd-journal-remote) live in /lib/systemd, outside PATH.
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || [ -x "/sbin/$cmd" ] || [ -x "/lib/systemd/$cmd" ] ||
    [ -x "/usr/lib/systemd/$cmd" ] || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing Debian packages: ${missing[*]} — run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
