#!/bin/bash
# Guest side of the e2e exec channel. cloud-init's bootcmd mounts the 9p share (host dir "share") on /mnt/e2e and
# runs this file as the transient unit gna-e2e-guest.service. The host drops scripts into cmd/<id>.sh; each one is
# run once, in order of arrival, and answered with cmd/<id>.out (stdout+stderr) and cmd/<id>.rc (exit status).
# Files appear through rename only, so the other side never reads a half-written file.
set -u
share=/mnt/e2e
mkdir -p "$share/cmd"
{
  echo "boot_id=$(cat /proc/sys/kernel/random/boot_id)"
  echo "hostname=$(hostname)"
  echo "uptime=$(cut -d' ' -f1 /proc/uptime)"
} >"$share/guest-ready.tmp" && mv "$share/guest-ready.tmp" "$share/guest-ready"
shopt -s nullglob
while :; do
  for script in "$share"/cmd/*.sh; do
    id=${script%.sh}
    [[ -e "$id.rc" ]] && continue
    timeout 300 bash "$script" >"$id.out.tmp" 2>&1
    rc=$?
    mv "$id.out.tmp" "$id.out"
    echo "$rc" >"$id.rc.tmp" && mv "$id.rc.tmp" "$id.rc"
  done
  sleep 0.3
done
