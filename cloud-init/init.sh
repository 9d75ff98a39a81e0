#!/bin/sh
IMAGE="${GNA_IMAGE:-__IMAGE__}"
REGISTRY_CA_API_SERVER="${GNA_REGISTRY_CA_API_SERVER:-__REGISTRY_CA_API_SERVER__}"
# Pulls gardener-node-agent from the OCI registry with curl (no containerd), installs it atomically
# to /opt/bin and execs `bootstrap`. Template points, knobs and behaviour: cloud-init/README.md.
# User data carries this script without comments and indentation (compactShell) and is capped at a
# few KiB: keep the code terse, explain it in comments.
set -eu
R="${GNA_ROOT:-}"
BIN="$R/opt/bin/gardener-node-agent"
CONF="$R/var/lib/gardener-node-agent"
W=
S=
TOKEN=
die() { echo "init.sh: $*" >&2; exit 1; }
# Empty operands are fine for rm -rf: nothing to remove before mktemp ran.
trap 'rm -rf "$S" "$W"' EXIT
trap 'exit 130' INT TERM

# JSON on stdin -> one "path=value" line per scalar, e.g. manifests.0.platform.architecture=amd64.
# grep cuts the document into tokens (strings with their escapes, punctuation, bare scalars), awk
# keeps a stack of containers: f = path of the container, t = is an array, x = array index,
# k = current object key, e = the next string is a key.
jf() {
  tr -d '\n\r' | grep -oE '"([^"\\]|\\.)*"|[][{}:,]|[^][{}:,"[:space:]]+' | awk '
  $0=="{"||$0=="[" {q=d?p():""; f[++d]=q; t[d]=$0=="["; x[d]=0; e=!t[d]; next}
  $0=="}"||$0=="]" {d--; next}
  $0=="," {x[d]++; e=!t[d]; next}
  $0==":" {e=0; next}
  {v=$0; if (v~/^"/) v=substr(v,2,length(v)-2)}
  e {k[d]=v; next}
  {print p() "=" v}
  function p() {return (f[d]==""?"":f[d] ".") (t[d]?x[d]:k[d])}'
}

case "$IMAGE" in "" | __IMAGE__) die "no image reference" ;; esac
SCHEME=https
[ "${GNA_REGISTRY_PLAIN_HTTP:-0}" != 1 ] || SCHEME=http
N="$IMAGE"
case "$N" in http://*) SCHEME=http; N="${N#http://}" ;; https://*) N="${N#https://}" ;; esac
DIGEST=
TAG=latest
case "$N" in *@*) DIGEST="${N#*@}"; N="${N%%@*}" ;; esac
case "${N##*/}" in *:*) TAG="${N##*:}"; N="${N%:*}" ;; esac
# Docker Hub short names: gardener/node-agent -> registry-1.docker.io/gardener/node-agent, busybox -> library/busybox.
REG="${N%%/*}"
REPO="${N#*/}"
case "$N" in */*) case "$REG" in *.* | *:* | localhost) ;; *) REG=docker.io; REPO="$N" ;; esac ;; *) REG=docker.io; REPO="library/$N" ;; esac
[ "$REG" != docker.io ] || REG=registry-1.docker.io
SHA=sha256:????????????????????????????????????????????????????????????????
case "$DIGEST" in "" | $SHA) ;; *) die "bad digest in $IMAGE" ;; esac
M="${GNA_ARCH:-$(uname -m)}"
case "$M" in x86_64 | amd64) ARCH=amd64 ;; aarch64 | arm64) ARCH=arm64 ;; *) die "unsupported machine architecture $M" ;; esac
BASE="$SCHEME://$REG/v2/$REPO"
cc() { curl -sS --connect-timeout 10 --speed-limit 1024 --speed-time 60 ${GNA_REGISTRY_CA_FILE:+--cacert "$GNA_REGISTRY_CA_FILE"} "$@"; }
W="$(mktemp -d)"

# Registry CA from the shoot API server (upstream init.sh step 3); any failure ends the run.
if [ -n "$REGISTRY_CA_API_SERVER" ] && [ "$REGISTRY_CA_API_SERVER" != __REGISTRY_CA_API_SERVER__ ]; then
  curl -sf --connect-timeout 10 --cacert "$CONF/cluster-ca.crt" -H "Authorization: Bearer $(head -n1 "$CONF/credentials/bootstrap-token" 2>/dev/null)" \
    -o "$W/ca.json" "$REGISTRY_CA_API_SERVER/api/v1/namespaces/kube-system/configmaps/registry-ca-bundle" 2>/dev/null ||
    die "cannot fetch configmap kube-system/registry-ca-bundle from $REGISTRY_CA_API_SERVER"
  b="$(jf <"$W/ca.json" | sed -n 's/^data\.bundle\.crt=//p')"
  if [ -n "$b" ]; then
    C="$R/var/lib/ca-certificates-local/registry-ca.crt"
    mkdir -p "${C%/*}" "$R/etc/pki/trust/anchors"
    printf %s "$b" | base64 -d >"$C" || die "registry CA bundle is not base64"
    cp "$C" "$R/etc/pki/trust/anchors/registry-ca.pem"
    if [ -z "$R" ]; then
      /var/lib/ssl/update-local-ca-certificates.sh >/dev/null 2>&1 || die "update-local-ca-certificates.sh failed"
      systemctl restart containerd >/dev/null 2>&1 || true # only for later image pulls; we do not use it
    fi
    echo "> Registry CA configured"
  fi
fi

# get URL OUT [ACCEPT [404OK]]: GET, one Bearer challenge answered with an anonymous token; 200 or die
# (a 404 returns 1 when 404OK is set).
get() {
  for a in 1 2; do
    c="$(cc -L -o "$2" -D "$W/h" -w '%{http_code}' -H "Accept: ${3:-*/*}" ${TOKEN:+-H "Authorization: Bearer $TOKEN"} "$1" 2>"$W/e")" || c="curl-$?"
    case "$c" in
      200) return 0 ;;
      401) [ $a = 1 ] && token && continue ;;
      404) [ -z "${4:-}" ] || return 1 ;;
      curl-*) die "cannot reach $1: $(head -n1 "$W/e")" ;;
    esac
    die "GET $1 failed with HTTP $c"
  done
}
# The last WWW-Authenticate: Bearer realm="…",service="…" header names the token service.
token() {
  ch="$(grep -i '^www-authenticate: *bearer' "$W/h" | tail -n1)"
  realm="$(echo "$ch" | sed -n 's/.*realm="\([^"]*\)".*/\1/p')"
  [ -n "$realm" ] || die "$REG wants credentials; anonymous pull only"
  cc -fG -o "$W/t" --data-urlencode "service=$(echo "$ch" | sed -n 's/.*service="\([^"]*\)".*/\1/p')" \
    --data-urlencode "scope=repository:$REPO:pull" "$realm" 2>"$W/e" || die "token request to $realm failed: $(head -n1 "$W/e")"
  TOKEN="$(jf <"$W/t" | sed -n 's/^token=//p;s/^access_token=//p' | head -n1)"
  [ -n "$TOKEN" ] || die "no token from $realm"
}
# sum FILE: its digest. verify FILE DIGEST WHAT
sum() { echo "sha256:$(sha256sum "$1" | cut -d' ' -f1)"; }
verify() {
  s="$(sum "$1")"
  [ "$s" = "$2" ] || die "digest mismatch for $3: got $s"
}

A=application/vnd
ACCEPT=$A.oci.image.index.v1+json,$A.oci.image.manifest.v1+json,$A.docker.distribution.manifest.list.v2+json,$A.docker.distribution.manifest.v2+json
get "$BASE/manifests/${DIGEST:-$TAG}" "$W/m" "$ACCEPT"
[ -z "$DIGEST" ] || verify "$W/m" "$DIGEST" "manifest of $IMAGE"
# cosign.pub: the top manifest must carry a cosign key-based signature (cloud-init/README.md step 2):
# a simple-signing layer of the sha256-<hex>.sig manifest names this digest, and its signature
# annotation verifies the layer with the key.
K="$CONF/cosign.pub"
if [ -f "$K" ]; then
  D="$(sum "$W/m")"
  get "$BASE/manifests/sha256-${D#*:}.sig" "$W/s" "$A.oci.image.manifest.v1+json" 1 || die "image $IMAGE ($D) has no signature"
  jf <"$W/s" >"$W/g"
  ok=
  for i in $(sed -n 's/^layers\.\([0-9]*\)\.mediaType=application\/vnd\.dev\.cosign\.simplesigning\.v1+json$/\1/p' "$W/g"); do
    pd="$(sed -n "s/^layers\.$i\.digest=//p" "$W/g")"
    case "$pd" in $SHA) ;; *) continue ;; esac
    get "$BASE/blobs/$pd" "$W/p"
    verify "$W/p" "$pd" "signature payload of $IMAGE"
    jf <"$W/p" >"$W/q"
    grep -qxF "critical.image.docker-manifest-digest=$D" "$W/q" && grep -qxF "critical.type=cosign container image signature" "$W/q" || continue
    sed -n "s/^layers\.$i\.annotations\.dev\.cosignproject\.cosign\/signature=//p" "$W/g" | base64 -d >"$W/z" 2>/dev/null &&
      openssl dgst -sha256 -verify "$K" -signature "$W/z" "$W/p" >/dev/null 2>&1 && ok=1 && break
  done
  [ -n "$ok" ] || die "no signature of $IMAGE ($D) verifies with $K"
  echo "> Verified the signature of $IMAGE ($D)"
fi
jf <"$W/m" >"$W/f"
# An index: take the linux/<arch> manifest (by digest, so it is checked too).
if grep -q '^manifests\.' "$W/f"; then
  md="$(awk -F= -v a="$ARCH" '{split($1,k,"."); v=substr($0,length($1)+2)}
    k[1]=="manifests" && k[3]=="digest" {g[k[2]]=v} k[3]=="platform" && k[4]=="architecture" {r[k[2]]=v} k[3]=="platform" && k[4]=="os" {o[k[2]]=v}
    END {for (i=0; (i "") in g; i++) if (r[i]==a && o[i]=="linux") {print g[i]; exit}}' "$W/f")"
  [ -n "$md" ] || die "image $IMAGE has no manifest for linux/$ARCH"
  get "$BASE/manifests/$md" "$W/m" "$ACCEPT"
  verify "$W/m" "$md" "linux/$ARCH manifest of $IMAGE"
  jf <"$W/m" >"$W/f"
fi
# Top layer first; whiteouts are not interpreted (agent images have one layer).
layers="$(sed -n 's/^layers\.[0-9]*\.digest=//p' "$W/f" | tac)"
[ -n "$layers" ] || die "manifest of $IMAGE has no layers"

# Unpack into a staging dir inside /opt/bin: installing is then a rename on the same filesystem.
mkdir -p "${BIN%/*}"
S="$(mktemp -d "${BIN%/*}/.gardener-node-agent.XXXXXX")"
found=
bad=
for l in $layers; do
  case "$l" in $SHA) ;; *) die "bad layer digest $l" ;; esac
  get "$BASE/blobs/$l" "$W/l"
  verify "$W/l" "$l" "layer $l of $IMAGE"
  # No match exits 2; leftovers of a failed run are never used; symlinks do not count.
  if tar -xf "$W/l" -C "$S" --no-same-owner --no-same-permissions --wildcards '*gardener-node-agent' 2>/dev/null; then
    for m in "$S/gardener-node-agent" "$S/ko-app/gardener-node-agent"; do
      if [ -f "$m" ] && [ ! -L "$m" ]; then found="$m"; break 2; fi
    done
  else
    bad="$l"
  fi
  rm -rf "$S"/* "$S"/.[!.]* "$W/l"
done
[ -n "$found" ] || die "no /gardener-node-agent or /ko-app/gardener-node-agent file in $IMAGE${bad:+ (or layer $bad is no tar)}"
chmod 0755 "$found"
sync "$found" 2>/dev/null || sync
mv -f "$found" "$BIN"
rm -rf "$S" "$W"
S=
W=
echo "> Installed $BIN from $IMAGE (linux/$ARCH)"
[ "${GNA_EXEC:-1}" = 0 ] && exit 0
exec "$BIN" bootstrap --config-dir="$CONF"
