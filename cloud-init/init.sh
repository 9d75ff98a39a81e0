#!/bin/sh
IMAGE="${GNA_IMAGE:-__IMAGE__}"
REGISTRY_CA_API_SERVER="${GNA_REGISTRY_CA_API_SERVER:-__REGISTRY_CA_API_SERVER__}"
# Pulls gardener-node-agent from the OCI registry with curl (no containerd), installs it atomically
# to /opt/bin and execs `bootstrap`. Template points, knobs and behaviour: cloud-init/README.md.
set -eu
R="${GNA_ROOT:-}"
BIN="$R/opt/bin/gardener-node-agent"
CONF="$R/var/lib/gardener-node-agent"
W=""
S=""
TOKEN=""
die() { echo "init.sh: $*" >&2; exit 1; }
trap '[ -z "$S" ] || rm -rf "$S"; [ -z "$W" ] || rm -rf "$W"' EXIT
trap 'exit 130' INT TERM

# JSON on stdin -> "path=value" per scalar, e.g. manifests.0.platform.architecture=amd64
jf() {
  awk '{b=b $0 "\n"} END {n=length(b); i=1; d=0
  while (i<=n) { c=substr(b,i,1)
    if (c~/[ \t\r\n]/) {i++; continue}
    if (c==":") {wk[d]=0; i++; continue}
    if (c==",") {if (t[d]=="o") wk[d]=1; else x[d]++; i++; continue}
    if (c=="}"||c=="]") {d--; i++; continue}
    if (c=="\"") { j=i+1
      while (j<=n) {h=substr(b,j,1); if (h=="\\") j+=2; else if (h=="\"") break; else j++}
      v=substr(b,i+1,j-i-1); i=j+1
      if (d>0 && t[d]=="o" && wk[d]) {k[d]=v; continue}
      print p() "=" v; continue }
    if (c=="{"||c=="[") {q=p(); d++; f[d]=q; t[d]=(c=="{")?"o":"a"; x[d]=0; wk[d]=(c=="{"); i++; continue}
    if (match(substr(b,i),/^[-+0-9.eEa-z]+/)) {print p() "=" substr(b,i,RLENGTH); i+=RLENGTH; continue}
    exit 3 } }
  function p(  y) {if (d==0) return ""; y=(t[d]=="o")?k[d]:x[d]; return (f[d]=="")?y:f[d] "." y}'
}

case "$IMAGE" in "" | __IMAGE__) die "no image reference (template not rendered and GNA_IMAGE unset)" ;; esac
SCHEME=https
[ "${GNA_REGISTRY_PLAIN_HTTP:-0}" != 1 ] || SCHEME=http
N="$IMAGE"
case "$N" in http://*) SCHEME=http; N="${N#http://}" ;; https://*) N="${N#https://}" ;; esac
DIGEST=""
TAG=""
case "$N" in *@*) DIGEST="${N#*@}"; N="${N%%@*}" ;; esac
case "${N##*/}" in *:*) TAG="${N##*:}"; N="${N%:*}" ;; esac
REG=registry-1.docker.io
REPO="$N"
case "$N" in */*) case "${N%%/*}" in *.* | *:* | localhost) REG="${N%%/*}"; REPO="${N#*/}" ;; esac ;; esac
[ "$REG" = docker.io ] && REG=registry-1.docker.io
case "$REG/$REPO" in registry-1.docker.io/*/*) ;; registry-1.docker.io/*) REPO="library/$REPO" ;; esac
SHA=sha256:????????????????????????????????????????????????????????????????
case "$DIGEST" in "" | $SHA) ;; *) die "invalid digest in image reference $IMAGE" ;; esac
M="${GNA_ARCH:-$(uname -m)}"
case "$M" in x86_64 | amd64) ARCH=amd64 ;; aarch64 | arm64) ARCH=arm64 ;; *) die "unsupported machine architecture $M" ;; esac
BASE="$SCHEME://$REG/v2/$REPO"
cc() { curl -sS --connect-timeout 10 --speed-limit 1024 --speed-time 60 ${GNA_REGISTRY_CA_FILE:+--cacert "$GNA_REGISTRY_CA_FILE"} "$@"; }
W="$(mktemp -d)" || die "cannot create a temp dir"

# Registry CA from the shoot API server (upstream init.sh step 3); any failure ends the run.
if [ -n "$REGISTRY_CA_API_SERVER" ] && [ "$REGISTRY_CA_API_SERVER" != __REGISTRY_CA_API_SERVER__ ]; then
  curl -sf --connect-timeout 10 --cacert "$CONF/cluster-ca.crt" -H "Authorization: Bearer $(head -n1 "$CONF/credentials/bootstrap-token" 2>/dev/null)" \
    -o "$W/ca.json" "$REGISTRY_CA_API_SERVER/api/v1/namespaces/kube-system/configmaps/registry-ca-bundle" 2>/dev/null ||
    die "cannot fetch configmap kube-system/registry-ca-bundle from $REGISTRY_CA_API_SERVER"
  b="$(jf <"$W/ca.json" | sed -n 's/^data\.bundle\.crt=//p')"
  if [ -n "$b" ]; then
    mkdir -p "$R/var/lib/ca-certificates-local" "$R/etc/pki/trust/anchors"
    printf '%s' "$b" | base64 -d >"$R/var/lib/ca-certificates-local/registry-ca.crt" || die "registry CA bundle is not base64"
    cp "$R/var/lib/ca-certificates-local/registry-ca.crt" "$R/etc/pki/trust/anchors/registry-ca.pem"
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
      401) [ "$a" = 1 ] && token && continue ;;
      404) [ -z "${4:-}" ] || return 1 ;;
      curl-*) die "cannot reach $1: $(head -n1 "$W/e")" ;;
    esac
    die "GET $1 failed with HTTP $c"
  done
}
token() {
  ch="$(tr -d '\r' <"$W/h" | sed -n 's/^[Ww][Ww][Ww]-[Aa]uthenticate: *[Bb]earer *//p' | tail -n1)"
  [ -n "$ch" ] || die "registry $REG wants credentials (no Bearer challenge); anonymous pull only"
  realm="$(echo "$ch" | sed -n 's/.*realm="\([^"]*\)".*/\1/p')"
  [ -n "$realm" ] || die "bearer challenge from $REG has no realm"
  c="$(cc -G -o "$W/t" -w '%{http_code}' --data-urlencode "service=$(echo "$ch" | sed -n 's/.*service="\([^"]*\)".*/\1/p')" \
    --data-urlencode "scope=repository:$REPO:pull" "$realm" 2>"$W/e")" || die "cannot reach token service $realm: $(head -n1 "$W/e")"
  [ "$c" = 200 ] || die "token request to $realm failed with HTTP $c"
  TOKEN="$(jf <"$W/t" | sed -n 's/^token=//p;s/^access_token=//p' | head -n1)"
  [ -n "$TOKEN" ] || die "token service $realm returned no token"
}
# verify FILE DIGEST WHAT
verify() {
  s="sha256:$(sha256sum "$1" | cut -d' ' -f1)"
  [ "$s" = "$2" ] || die "digest mismatch for $3: expected $2, got $s"
}

A=application/vnd
ACCEPT=$A.oci.image.index.v1+json,$A.oci.image.manifest.v1+json,$A.docker.distribution.manifest.list.v2+json,$A.docker.distribution.manifest.v2+json
get "$BASE/manifests/${DIGEST:-${TAG:-latest}}" "$W/m" "$ACCEPT"
[ -z "$DIGEST" ] || verify "$W/m" "$DIGEST" "manifest of $IMAGE"
# cosign.pub: the top manifest must carry a cosign key-based signature (cloud-init/README.md step 2)
K="$CONF/cosign.pub"
if [ -f "$K" ]; then
  D="sha256:$(sha256sum "$W/m" | cut -d' ' -f1)"
  get "$BASE/manifests/sha256-${D#*:}.sig" "$W/s" "$A.oci.image.manifest.v1+json" 1 || die "image $IMAGE ($D) has no signature"
  jf <"$W/s" >"$W/g" || die "signature manifest of $IMAGE is not JSON"
  ok=""
  for i in $(sed -n 's/^layers\.\([0-9]*\)\.mediaType=application\/vnd\.dev\.cosign\.simplesigning\.v1+json$/\1/p' "$W/g"); do
    pd="$(sed -n "s/^layers\.$i\.digest=//p" "$W/g")"
    case "$pd" in $SHA) ;; *) continue ;; esac
    get "$BASE/blobs/$pd" "$W/p"
    verify "$W/p" "$pd" "signature payload of $IMAGE"
    jf <"$W/p" >"$W/q" 2>/dev/null || continue
    grep -qxF "critical.image.docker-manifest-digest=$D" "$W/q" && grep -qxF "critical.type=cosign container image signature" "$W/q" || continue
    sed -n "s/^layers\.$i\.annotations\.dev\.cosignproject\.cosign\/signature=//p" "$W/g" | base64 -d >"$W/z" 2>/dev/null &&
      openssl dgst -sha256 -verify "$K" -signature "$W/z" "$W/p" >/dev/null 2>&1 && ok=1 && break
  done
  [ -n "$ok" ] || die "no signature of $IMAGE ($D) verifies with $K"
  echo "> Verified the signature of $IMAGE ($D)"
fi
jf <"$W/m" >"$W/f" || die "manifest of $IMAGE is not JSON"
if grep -q '^manifests\.' "$W/f"; then
  md="$(awk -F= -v a="$ARCH" '{split($1,k,"."); if (k[1]!="manifests") next; v=substr($0,length($1)+2)}
    k[3]=="digest" {g[k[2]]=v} k[3]=="platform" && k[4]=="architecture" {r[k[2]]=v} k[3]=="platform" && k[4]=="os" {o[k[2]]=v}
    END {for (i=0; (i "") in g; i++) if (r[i]==a && o[i]=="linux") {print g[i]; exit}}' "$W/f")"
  [ -n "$md" ] || die "image $IMAGE has no manifest for linux/$ARCH"
  get "$BASE/manifests/$md" "$W/m" "$ACCEPT"
  verify "$W/m" "$md" "linux/$ARCH manifest of $IMAGE"
  jf <"$W/m" >"$W/f" || die "manifest of $IMAGE is not JSON"
fi
# Top layer first; whiteouts are not interpreted (agent images have one layer).
layers="$(awk -F= '{split($1,k,".")} k[1]=="layers" && k[3]=="digest" {l[++n]=substr($0,length($1)+2)} END {for (i=n; i>0; i--) print l[i]}' "$W/f")"
[ -n "$layers" ] || die "manifest of $IMAGE has no layers"

# Unpack into a staging dir inside /opt/bin: installing is then a rename on the same filesystem.
mkdir -p "${BIN%/*}" || die "cannot create ${BIN%/*}"
S="$(mktemp -d "${BIN%/*}/.gardener-node-agent.XXXXXX")" || die "cannot create a staging dir in ${BIN%/*}"
found=""
bad=""
for l in $layers; do
  case "$l" in $SHA) ;; *) die "bad layer digest $l" ;; esac
  get "$BASE/blobs/$l" "$W/l"
  verify "$W/l" "$l" "layer $l of $IMAGE"
  # No match exits 2; leftovers of a failed run are never used.
  if tar -xf "$W/l" -C "$S" --no-same-owner --no-same-permissions --wildcards '*gardener-node-agent' 2>/dev/null; then
    for m in gardener-node-agent ko-app/gardener-node-agent; do
      if [ -f "$S/$m" ] && [ ! -L "$S/$m" ]; then found="$S/$m"; break 2; fi
    done
  else
    bad="$l"
  fi
  rm -rf "$S"/* "$S"/.[!.]* "$W/l"
done
[ -n "$found" ] || die "image $IMAGE contains neither /gardener-node-agent nor /ko-app/gardener-node-agent as a regular file${bad:+ (or layer $bad is not a readable tar)}"
chmod 0755 "$found" || die "cannot chmod $found"
sync "$found" 2>/dev/null || sync
mv -f "$found" "$BIN" || die "cannot move the binary to $BIN"
rm -rf "$S" "$W"
S=""
W=""
echo "> Installed $BIN from $IMAGE (linux/$ARCH)"
[ "${GNA_EXEC:-1}" = 0 ] && exit 0
exec "$BIN" bootstrap --config-dir="$CONF"
