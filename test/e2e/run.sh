#!/usr/bin/env bash
# Real-VM end-to-end test: a Debian bookworm VM (qemu TCG, real systemd, real cloud-init NoCloud) is provisioned
# with the project's own user data and checked step by step from the host. See test/e2e/README.md.
#
#   make e2e                  # builds dist/ first
#   bash test/e2e/run.sh      # uses what is in dist/
#
# Environment: GNA_E2E_DIST (build output with the amd64 binary and oci/, default dist), GNA_E2E_WORK (work dir, default a new /tmp/gna-e2e.XXXXXX), GNA_E2E_CACHE (image cache, default
# /var/cache/gna-e2e), GNA_E2E_KEEP_DISKS=1 (keep the VM disks and the registry storage), GNA_E2E_STEP_TIMEOUT_SCALE (multiply deadlines).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
BUN=${BUN:-$REPO/node_modules/.bin/bun}
DIST=${GNA_E2E_DIST:-$REPO/dist}
AGENT_BIN=$DIST/gardener-node-agent-linux-amd64
OCI_DIR=$DIST/oci
WORK=${GNA_E2E_WORK:-$(mktemp -d /tmp/gna-e2e.XXXXXX)}
SHARE=$WORK/share
GUEST_API=10.0.2.100:6443
GUEST_REGISTRY=10.0.2.101:5000
HOSTNAME_IN_GUEST=gna-e2e-node
START=$SECONDS
declare -a PIDS=()

log() { printf '[e2e %s +%ss] %s\n' "$(date -u +%H:%M:%S)" "$((SECONDS - START))" "$*"; }
die() { log "FAIL setup: $*"; exit 1; }

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  local pid
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [[ -z "${GNA_E2E_KEEP_DISKS:-}" ]]; then
    rm -f "$WORK/root.qcow2" "$WORK/data.raw" "$WORK/seed.iso"
    rm -rf "$WORK/registry" # ~100 MiB of pushed blobs per run
  fi
  log "logs: $WORK (serial.log, qemu.log, apiserver.log, registry.log, share/)"
  log "total duration: $((SECONDS - START)) s, exit code $rc"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { "$BUN" -e 'const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } }); console.log(s.port); s.stop(true);'; }

# Waits until the first line of FILE is complete JSON (a service's start-up line) or the process PID died.
wait_json_line() {
  local file=$1 pid=$2 deadline=$((SECONDS + 60))
  # jq exits 0 on empty input, so compare its output rather than trusting its exit status.
  until [[ "$(head -n1 "$file" 2>/dev/null | jq -r '.url // empty' 2>/dev/null)" == https://* ]]; do
    kill -0 "$pid" 2>/dev/null || return 1
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

mkdir -p "$WORK" "$SHARE/cmd"
log "work dir $WORK"

for tool in qemu-system-x86_64 qemu-img cloud-localds socat docker-registry debootstrap mkfs.ext4 jq openssl; do
  command -v "$tool" >/dev/null || die "missing tool $tool (apt-get install qemu-system-x86 qemu-utils cloud-image-utils socat docker-registry debootstrap e2fsprogs jq openssl)"
done
[[ -x "$BUN" ]] || die "missing $BUN (make deps)"

# 1. Base image (cached; ~2-5 min when the recipe changed, seconds otherwise).
log "base image"
CACHE=$(bash test/e2e/image.sh 2>"$WORK/image.log") || { cat "$WORK/image.log"; die "image build failed"; }
[[ -s "$CACHE/base.raw" ]] || die "image.sh printed '$CACHE', which holds no base.raw"
CACHE_SECONDS=$((SECONDS - START))
log "base image ready in $CACHE ($CACHE_SECONDS s; $(grep -q debootstrap "$WORK/image.log" && echo rebuilt || echo cached))"

# 2. Host services: docker-registry and the API server simulator, both on 127.0.0.1 only.
REG_PORT=$(free_port)
mkdir -p "$WORK/registry"
cat >"$WORK/registry.yml" <<EOF
version: 0.1
log: { level: info, accesslog: { disabled: false } }
storage: { filesystem: { rootdirectory: $WORK/registry }, delete: { enabled: true } }
http: { addr: 127.0.0.1:$REG_PORT }
EOF
docker-registry serve "$WORK/registry.yml" >"$WORK/registry.log" 2>&1 &
PIDS+=($!)

API_PORT=$(free_port)
# The simulator plus a control API for fixtures and CSR signing.
"$BUN" run test/e2e/sim-host.ts --port "$API_PORT" --bind 127.0.0.1 --san "${GUEST_API%%:*}" --state-dir "$WORK/apiserver" \
  >"$WORK/apiserver.json" 2>"$WORK/apiserver.log" &
API_PID=$!
PIDS+=("$API_PID")
wait_json_line "$WORK/apiserver.json" "$API_PID" || { tail -n 20 "$WORK/apiserver.log"; die "API server did not start"; }
for _ in $(seq 50); do curl -fsS "http://127.0.0.1:$REG_PORT/v2/" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fsS "http://127.0.0.1:$REG_PORT/v2/" >/dev/null || die "registry did not start (see $WORK/registry.log)"
API_URL=$(head -n1 "$WORK/apiserver.json" | jq -r .url)
log "API server $API_URL, registry 127.0.0.1:$REG_PORT"

# 3. The artifact: pushed into the registry, referenced by digest.
DIGEST=""
if [[ -f oci/push.ts && -d "$OCI_DIR" ]]; then
  "$BUN" run oci/push.ts "$OCI_DIR" "127.0.0.1:$REG_PORT/gardener-node-agent:e2e" >"$WORK/push.log" 2>&1 || { cat "$WORK/push.log"; die "push failed"; }
  DIGEST=$(grep -o 'sha256:[0-9a-f]\{64\}' "$WORK/push.log" | tail -n1)
  log "pushed $DIGEST"
else
  log "WARN: oci/push.ts or $OCI_DIR missing: nothing pushed"
fi

# 4. Fixtures in the simulator and the NoCloud seed (user data = the project's provision script).
"$BUN" run test/e2e/scenario.ts prepare --work "$WORK" --repo "$REPO" --api-info "$WORK/apiserver.json" \
  --registry-host "127.0.0.1:$REG_PORT" --guest-api "$GUEST_API" --guest-registry "$GUEST_REGISTRY" \
  --digest "$DIGEST" --agent-binary "$AGENT_BIN" --hostname "$HOSTNAME_IN_GUEST" || die "prepare failed"
cp test/e2e/guest.sh "$SHARE/guest.sh"
cloud-localds -N "$WORK/network-config" "$WORK/seed.iso" "$WORK/user-data" "$WORK/meta-data" || die "cloud-localds failed"
qemu-img create -q -f qcow2 -F raw -b "$CACHE/base.raw" "$WORK/root.qcow2" || die "qemu-img create failed"
rm -f "$WORK/data.raw" && truncate -s 2G "$WORK/data.raw"

# 5. The VM. The guest reaches the host only through the two guestfwd rules (restrict=on).
log "booting the VM (serial log: $WORK/serial.log)"
qemu-system-x86_64 -name gna-e2e -nodefaults -no-user-config -display none -no-reboot \
  -accel tcg,tb-size=256 -cpu max -smp 2 -m 1024 \
  -kernel "$CACHE/vmlinuz" -initrd "$CACHE/initrd.img" -append "root=/dev/vda rw console=ttyS0 systemd.show_status=1" \
  -drive "file=$WORK/root.qcow2,if=virtio,format=qcow2" \
  -drive "file=$WORK/data.raw,if=virtio,format=raw" \
  -drive "file=$WORK/seed.iso,if=virtio,format=raw,readonly=on" \
  -netdev "user,id=n0,restrict=on,guestfwd=tcp:$GUEST_API-cmd:socat STDIO TCP:127.0.0.1:$API_PORT,guestfwd=tcp:$GUEST_REGISTRY-cmd:socat STDIO TCP:127.0.0.1:$REG_PORT" \
  -device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56 \
  -virtfs "local,path=$SHARE,mount_tag=host0,security_model=none,id=fs0" \
  -serial "file:$WORK/serial.log" >"$WORK/qemu.log" 2>&1 &
QEMU_PID=$!
PIDS+=("$QEMU_PID")

# 6. The scenario: PASS/FAIL per step; its exit code is ours.
"$BUN" run test/e2e/scenario.ts verify --work "$WORK" --qemu-pid "$QEMU_PID"
