#!/bin/sh
IMAGE="${GNA_IMAGE:-__IMAGE__}"
REGISTRY_CA_API_SERVER="${GNA_REGISTRY_CA_API_SERVER:-__REGISTRY_CA_API_SERVER__}"
# Pulls gardener-node-agent from the OCI registry with curl (no containerd), installs it atomically
# to /opt/bin and execs `bootstrap`. Template points, knobs and behaviour: cloud-init/README.md.
# User data carries this script without comments and indentation (compactShell) and has to fit in
# 4 KiB with the cluster CA: keep the code terse and explain it in comments.
set -eu
R=${GNA_ROOT:-}
BIN=$R/opt/bin/gardener-node-agent
CONF=$R/var/lib/gardener-node-agent
W= S= TOKEN= found= ch=
die() { echo "init.sh: $*" >&2; exit 1; }
# Empty operands are fine for rm -rf: nothing to remove before mktemp ran.
trap 'rm -rf "$S" "$W"' EXIT
trap 'exit 130' INT TERM

# JSON on stdin -> one "path=value" line per scalar, e.g. manifests.0.platform.architecture=amd64.
# grep cuts the document into tokens (strings with their escapes, punctuation, bare scalars; no
# token spans lines, JSON strings hold no raw newline), awk
# keeps a stack of containers: f = path of the container with its dot, t = is an array, x = array index,
# k = current object key, e = the next string is a key.
jf() {
  grep -oE '"([^"\\]|\\.)*"|[][{}:,]|[^][{}:,"[:space:]]+' | awk '
  /^[[{]$/ {q=d?p() ".":""; f[++d]=q; t[d]=$0=="["; x[d]=0; e=!t[d]; next}
  /^[]}]$/ {d--; next}
  $0=="," {x[d]++; e=!t[d]; next}
  $0==":" {e=0; next}
  {v=/^"/?substr($0,2,length($0)-2):$0}
  e {k[d]=v; next}
  {print p() "=" v}
  function p() {return f[d] (t[d]?x[d]:k[d])}'
}

# The renderer checks the reference and writes it as host[:port]/repo[:tag][@sha256:…] (Docker Hub
# names resolved to registry-1.docker.io/…); a digest wins over the tag. Every document and blob
# fetched by digest is checked against it, so a bad digest ends in a mismatch.
# The template check: rendered, line 2 holds the reference, so user data leaves this line out.
[ -n "${IMAGE%__IMAGE__}" ] || die "no image reference"
[ "${GNA_REGISTRY_PLAIN_HTTP:-}" = 1 ] && P=http || P=https
# Assignments expand without word splitting: no quotes needed.
N=$IMAGE D= T=latest
case $N in *@*) D=${N#*@} N=${N%%@*} ;; esac
case ${N##*/} in *:*) T=${N##*:} N=${N%:*} ;; esac
REG=${N%%/*} REPO=${N#*/}
M=${GNA_ARCH:-$(uname -m)}
case $M in x86_64) ARCH=amd64 ;; aarch64) ARCH=arm64 ;; *) die "unsupported machine architecture $M" ;; esac
BASE=$P://$REG/v2/$REPO
W=$(mktemp -d)

# Registry CA from the shoot API server (upstream init.sh step 3); any failure ends the run.
if [ -n "$REGISTRY_CA_API_SERVER" ] && [ "$REGISTRY_CA_API_SERVER" != __REGISTRY_CA_API_SERVER__ ]; then
  curl -sf --connect-timeout 10 --cacert "$CONF/cluster-ca.crt" -H "Authorization: Bearer $(head -n1 "$CONF/credentials/bootstrap-token" 2>/dev/null)" \
    -o "$W/ca.json" "$REGISTRY_CA_API_SERVER/api/v1/namespaces/kube-system/configmaps/registry-ca-bundle" 2>/dev/null ||
    die "cannot fetch configmap kube-system/registry-ca-bundle from $REGISTRY_CA_API_SERVER"
  b=$(jf <"$W/ca.json" | sed -n 's/^data\.bundle\.crt=//p')
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
# (a 404 returns 1 when 404OK is set; only the signature check sets it, so user data without that check
# leaves the line out: "# signature check only"). -Y1024 -y60: --speed-limit 1024 --speed-time 60 (a stalled
# transfer fails after a minute).
get() {
  for a in 1 2; do
    c=$(curl -sSL --connect-timeout 10 -Y1024 -y60 -o "$2" -D "$W/h" -w '%{http_code}' -H "Accept: ${3:-*/*}" ${TOKEN:+-H "Authorization: Bearer $TOKEN"} "$1" 2>"$W/e") ||
      die "cannot reach $1: $(head -n1 "$W/e")"
    case $c in
      200) return ;;
      401) [ $a = 2 ] || { token; continue; } ;;
      404) [ -z "${4:-}" ] || return 1 ;; # signature check only
    esac
    die "GET $1 failed with HTTP $c"
  done
}
# The last `WWW-Authenticate: Bearer realm="…",service="…"` header names the token service, which
# get asks (ch set: a token service that wants credentials itself ends the run, no recursion).
token() {
  [ -z "$ch" ] && ch=$(grep -i '^www-authenticate: *bearer' "$W/h" | tail -n1) && realm=$(hv realm) && [ -n "$realm" ] ||
    die "$REG wants credentials; anonymous pull only"
  get "$realm?service=$(hv service)&scope=repository:$REPO:pull" "$W/t"
  # No token in the answer: the retried GET fails with 401.
  TOKEN=$(jf <"$W/t" | sed -n 's/^token=//p;s/^access_token=//p' | head -n1)
  ch=
}
hv() { echo "$ch" | sed -n "s/.*$1=\"\([^\"]*\)\".*/\1/p"; }
# verify FILE DIGEST WHAT (s = the file's digest)
verify() {
  s=sha256:$(sha256sum "$1" | cut -d' ' -f1)
  [ "$s" = "$2" ] || die "digest mismatch for $3 $2: got $s"
}

A=application/vnd
o=$A.oci.image
d=$A.docker.distribution.manifest
ACCEPT=$o.index.v1+json,$o.manifest.v1+json,$d.list.v2+json,$d.v2+json
get "$BASE/manifests/${D:-$T}" "$W/m" "$ACCEPT"
[ -z "$D" ] || verify "$W/m" "$D" manifest
# cosign.pub: the top manifest must carry a cosign key-based signature (cloud-init/README.md step 2):
# a simple-signing layer of the sha256-<hex>.sig manifest names this digest, and its signature
# annotation verifies the layer with the key. User data rendered without a key carries a refusal instead.
K=$CONF/cosign.pub
if [ -f "$K" ]; then
  D="sha256:$(sha256sum "$W/m" | cut -d' ' -f1)"
  get "$BASE/manifests/sha256-${D#*:}.sig" "$W/s" "$o.manifest.v1+json" 1 || die "image $IMAGE ($D) has no signature"
  jf <"$W/s" >"$W/g"
  ok=
  for i in $(sed -n 's/^layers\.\([0-9]*\)\.mediaType=application\/vnd\.dev\.cosign\.simplesigning\.v1+json$/\1/p' "$W/g"); do
    pd=$(sed -n "s/^layers\.$i\.digest=//p" "$W/g")
    case "$pd" in sha256:????????????????????????????????????????????????????????????????) ;; *) continue ;; esac
    get "$BASE/blobs/$pd" "$W/p"
    verify "$W/p" "$pd" "signature payload"
    jf <"$W/p" >"$W/q"
    grep -qxF "critical.image.docker-manifest-digest=$D" "$W/q" && grep -qxF "critical.type=cosign container image signature" "$W/q" || continue
    sed -n "s/^layers\.$i\.annotations\.dev\.cosignproject\.cosign\/signature=//p" "$W/g" | base64 -d >"$W/z" 2>/dev/null &&
      openssl dgst -sha256 -verify "$K" -signature "$W/z" "$W/p" >/dev/null 2>&1 && ok=1 && break
  done
  [ -n "$ok" ] || die "no signature of $IMAGE ($D) verifies with $K"
  echo "> Verified the signature of $IMAGE ($D)"
fi
jf <"$W/m" >"$W/f"
# An index: take the first linux/<arch> manifest (by digest, so it is checked too).
if grep -q '^manifests\.' "$W/f"; then
  # An entry's lines are adjacent in document order: an index with both lines shows up twice in a row.
  i=$(grep -xE "manifests\.[0-9]+\.platform\.(architecture=$ARCH|os=linux)" "$W/f" | cut -d. -f2 | uniq -d | head -n1)
  md=$(sed -n "s/^manifests\.${i:-x}\.digest=//p" "$W/f")
  [ -n "$md" ] || die "image $IMAGE has no manifest for linux/$ARCH"
  get "$BASE/manifests/$md" "$W/m" "$ACCEPT"
  verify "$W/m" "$md" manifest
  jf <"$W/m" >"$W/f"
fi

# Layers top-down (whiteouts are not interpreted; agent images have one layer), unpacked into a
# staging dir inside /opt/bin: installing is then a rename on the same filesystem.
mkdir -p "${BIN%/*}"
S=$(mktemp -d "${BIN%/*}/.gardener-node-agent.XXXXXX")
for l in $(sed -n 's/^layers\.[0-9]*\.digest=//p' "$W/f" | tac); do
  get "$BASE/blobs/$l" "$W/l"
  verify "$W/l" "$l" layer
  # No match (or no tar) exits non-zero: leftovers of a failed run are never used; symlinks do not count.
  if tar -xf "$W/l" -C "$S" --no-same-owner --wildcards '*gardener-node-agent' 2>/dev/null; then
    for m in "$S/gardener-node-agent" "$S/ko-app/gardener-node-agent"; do
      [ ! -f "$m" ] || [ -L "$m" ] || { found="$m"; break 2; }
    done
  fi
  rm -rf "$S"/* "$W/l"
done
[ -n "$found" ] || die "no gardener-node-agent file in $IMAGE"
chmod 0755 "$found"
sync
mv -f "$found" "$BIN"
# exec skips the EXIT trap.
rm -rf "$S" "$W"
echo "> Installed $BIN from $IMAGE (linux/$ARCH)"
[ "${GNA_EXEC:-1}" = 0 ] && exit 0
exec "$BIN" bootstrap --config-dir="$CONF"
