#!/bin/sh
IMAGE="${GNA_IMAGE:-__IMAGE__}"
REGISTRY_CA_API_SERVER="${GNA_REGISTRY_CA_API_SERVER:-__REGISTRY_CA_API_SERVER__}"
# Downloads the gardener-node-agent binary straight from the OCI registry (no containerd needed:
# curl + tar + sha256sum + awk), installs it atomically to /opt/bin and execs `bootstrap`.
# Lines 2-3 are the template points: the renderer replaces __IMAGE__ (repo:tag or repo@sha256:...)
# and __REGISTRY_CA_API_SERVER__ (the shoot API URL when the registry CA is enabled, else "").
# Test/ops knobs (all optional): GNA_ROOT (prefix for /opt/bin and the config dir), GNA_EXEC=0
# (install only), GNA_REGISTRY_PLAIN_HTTP=1 (http://), GNA_REGISTRY_CA_FILE (extra CA for curl),
# GNA_ARCH (override `uname -m`), GNA_REGISTRY_CA_API_SERVER (overrides line 3).
set -eu

ROOT="${GNA_ROOT:-}"
BIN_DIR="$ROOT/opt/bin"
BIN="$BIN_DIR/gardener-node-agent"
CONFIG_DIR="$ROOT/var/lib/gardener-node-agent"
ACCEPT="application/vnd.oci.image.index.v1+json,application/vnd.oci.image.manifest.v1+json,application/vnd.docker.distribution.manifest.list.v2+json,application/vnd.docker.distribution.manifest.v2+json"
WORK=""
STAGED=""
TOKEN=""

die() {
  echo "init.sh: $*" >&2
  exit 1
}

cleanup() {
  [ -n "$STAGED" ] && rm -rf "$STAGED"
  [ -n "$WORK" ] && rm -rf "$WORK"
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Prints "path=value" for every scalar of a JSON document (keys joined with "."), e.g.
# manifests.0.platform.architecture=amd64. Enough JSON for registry manifests and token answers.
json_flat() {
  awk '
    { buf = buf $0 "\n" }
    END {
      s = buf; n = length(s); i = 1; d = 0; wantkey[0] = 0
      while (i <= n) {
        c = substr(s, i, 1)
        if (c == " " || c == "\t" || c == "\r" || c == "\n") { i++; continue }
        if (c == ":") { wantkey[d] = 0; i++; continue }
        if (c == ",") { if (ctype[d] == "o") wantkey[d] = 1; else cidx[d]++; i++; continue }
        if (c == "}" || c == "]") { d--; i++; continue }
        if (c == "\"") {
          j = i + 1
          while (j <= n) { ch = substr(s, j, 1); if (ch == "\\") j += 2; else if (ch == "\"") break; else j++ }
          str = substr(s, i + 1, j - i - 1); i = j + 1
          if (d > 0 && ctype[d] == "o" && wantkey[d]) { ckey[d] = str; continue }
          print here() "=" str; continue
        }
        if (c == "{" || c == "[") {
          p = here(); d++; prefix[d] = p; ctype[d] = (c == "{") ? "o" : "a"; cidx[d] = 0; wantkey[d] = (c == "{"); i++; continue
        }
        rest = substr(s, i)
        if (match(rest, /^[-+0-9.eEa-z]+/)) { print here() "=" substr(rest, 1, RLENGTH); i += RLENGTH; continue }
        exit 3
      }
    }
    function here(   k) {
      if (d == 0) return ""
      k = (ctype[d] == "o") ? ckey[d] : cidx[d]
      return (prefix[d] == "") ? k : prefix[d] "." k
    }'
}

# --- image reference -------------------------------------------------------------------------
case "$IMAGE" in
  "" | __IMAGE__) die "no image reference (template not rendered and GNA_IMAGE unset)" ;;
esac
SCHEME=https
[ "${GNA_REGISTRY_PLAIN_HTTP:-0}" = "1" ] && SCHEME=http
NAME="$IMAGE"
# An explicit scheme prefix (test registries, e.g. http://10.0.2.100:5000/gna:v1) picks the protocol.
case "$NAME" in
  http://*) SCHEME=http; NAME="${NAME#http://}" ;;
  https://*) SCHEME=https; NAME="${NAME#https://}" ;;
esac
DIGEST=""
TAG=""
case "$NAME" in *@*) DIGEST="${NAME#*@}"; NAME="${NAME%%@*}" ;; esac
case "${NAME##*/}" in *:*) TAG="${NAME##*:}"; NAME="${NAME%:*}" ;; esac
REGISTRY="docker.io"
REPO="$NAME"
case "$NAME" in
  */*)
    first="${NAME%%/*}"
    case "$first" in *.* | *:* | localhost) REGISTRY="$first"; REPO="${NAME#*/}" ;; esac
    ;;
esac
[ "$REGISTRY" = "docker.io" ] && REGISTRY="registry-1.docker.io"
case "$REGISTRY/$REPO" in registry-1.docker.io/*/*) ;; registry-1.docker.io/*) REPO="library/$REPO" ;; esac
case "$DIGEST" in "" | sha256:????????????????????????????????????????????????????????????????) ;; *) die "invalid digest in image reference $IMAGE" ;; esac
REFERENCE="${DIGEST:-${TAG:-latest}}"

case "${GNA_ARCH:-$(uname -m)}" in
  x86_64 | amd64) ARCH=amd64 ;;
  aarch64 | arm64) ARCH=arm64 ;;
  *) die "unsupported machine architecture $(uname -m)" ;;
esac

BASE="$SCHEME://$REGISTRY/v2/$REPO"
# curl with our defaults; a stalled transfer (<1 KiB/s for 60 s) fails instead of hanging forever.
ccurl() {
  if [ -n "${GNA_REGISTRY_CA_FILE:-}" ]; then
    curl --silent --show-error --connect-timeout 10 --speed-limit 1024 --speed-time 60 --cacert "$GNA_REGISTRY_CA_FILE" "$@"
  else
    curl --silent --show-error --connect-timeout 10 --speed-limit 1024 --speed-time 60 "$@"
  fi
}

WORK="$(mktemp -d)" || die "cannot create a temp dir"

# --- optional registry CA from the shoot API server (upstream init.sh step 3) ----------------
CA_SERVER="$REGISTRY_CA_API_SERVER"
[ "$CA_SERVER" = "__REGISTRY_CA_API_SERVER__" ] && CA_SERVER=""
if [ -n "$CA_SERVER" ]; then
  token_file="$ROOT/var/lib/gardener-node-agent/credentials/bootstrap-token"
  ca_json="$WORK/registry-ca.json"
  curl --silent --connect-timeout 10 -f --cacert "$CONFIG_DIR/cluster-ca.crt" -H "Authorization: Bearer $(head -n1 "$token_file" 2>/dev/null)" \
    -o "$ca_json" "$CA_SERVER/api/v1/namespaces/kube-system/configmaps/registry-ca-bundle" 2>/dev/null ||
    die "cannot fetch configmap kube-system/registry-ca-bundle from $CA_SERVER"
  bundle="$(json_flat <"$ca_json" | sed -n 's/^data\.bundle\.crt=//p')"
  if [ -n "$bundle" ]; then
    mkdir -p "$ROOT/var/lib/ca-certificates-local" "$ROOT/etc/pki/trust/anchors"
    printf '%s' "$bundle" | base64 -d >"$ROOT/var/lib/ca-certificates-local/registry-ca.crt" || die "registry CA bundle is not base64"
    cp "$ROOT/var/lib/ca-certificates-local/registry-ca.crt" "$ROOT/etc/pki/trust/anchors/registry-ca.pem"
    if [ -z "$ROOT" ]; then
      /var/lib/ssl/update-local-ca-certificates.sh >/dev/null 2>&1 || die "update-local-ca-certificates.sh failed"
      systemctl restart containerd >/dev/null 2>&1 || true # containerd may be absent; we do not need it
    fi
    echo "> Registry CA configured"
  fi
fi

# --- registry access -------------------------------------------------------------------------
# fetch URL OUT [ACCEPT]: GET with the registry token (fetched on a Bearer challenge), following
# redirects (curl drops our Authorization header on other hosts). Dies on anything but 200.
fetch() {
  url="$1"
  out="$2"
  accept="${3:-*/*}"
  for attempt in 1 2; do
    if [ -n "$TOKEN" ]; then
      code="$(ccurl -L -o "$out" -D "$WORK/headers" -w '%{http_code}' -H "Accept: $accept" -H "Authorization: Bearer $TOKEN" "$url" 2>"$WORK/curl.err")" || code="curl-$?"
    else
      code="$(ccurl -L -o "$out" -D "$WORK/headers" -w '%{http_code}' -H "Accept: $accept" "$url" 2>"$WORK/curl.err")" || code="curl-$?"
    fi
    case "$code" in
      200) return 0 ;;
      401) [ "$attempt" = 1 ] && get_token && continue ;;
      curl-*) die "cannot reach $url: $(head -n1 "$WORK/curl.err")" ;;
    esac
    die "GET $url failed with HTTP $code"
  done
}

get_token() {
  challenge="$(tr -d '\r' <"$WORK/headers" | sed -n 's/^[Ww][Ww][Ww]-[Aa]uthenticate: *[Bb]earer *//p' | tail -n1)"
  [ -n "$challenge" ] || die "registry $REGISTRY wants credentials (no Bearer challenge); anonymous pull only"
  realm="$(printf '%s\n' "$challenge" | sed -n 's/.*realm="\([^"]*\)".*/\1/p')"
  service="$(printf '%s\n' "$challenge" | sed -n 's/.*service="\([^"]*\)".*/\1/p')"
  [ -n "$realm" ] || die "bearer challenge from $REGISTRY has no realm"
  code="$(ccurl -G -o "$WORK/token.json" -w '%{http_code}' --data-urlencode "service=$service" \
    --data-urlencode "scope=repository:$REPO:pull" "$realm" 2>"$WORK/curl.err")" || die "cannot reach token service $realm: $(head -n1 "$WORK/curl.err")"
  [ "$code" = 200 ] || die "token request to $realm failed with HTTP $code"
  TOKEN="$(json_flat <"$WORK/token.json" | sed -n 's/^token=//p;s/^access_token=//p' | head -n1)"
  [ -n "$TOKEN" ] || die "token service $realm returned no token"
}

# verify FILE DIGEST: the file's sha256 must equal the digest.
verify() {
  sum="$(sha256sum "$1" | cut -d' ' -f1)"
  [ "sha256:$sum" = "$2" ] || die "digest mismatch for $3: expected $2, got sha256:$sum"
}

# --- resolve the platform manifest -----------------------------------------------------------
fetch "$BASE/manifests/$REFERENCE" "$WORK/top.json" "$ACCEPT"
[ -n "$DIGEST" ] && verify "$WORK/top.json" "$DIGEST" "manifest of $IMAGE"
json_flat <"$WORK/top.json" >"$WORK/top.flat" || die "manifest of $IMAGE is not JSON"
if grep -q '^manifests\.' "$WORK/top.flat"; then
  manifest_digest="$(awk -F= -v arch="$ARCH" '
    { split($1, k, "."); if (k[1] != "manifests") next; v = substr($0, length($1) + 2) }
    k[3] == "digest" { dg[k[2]] = v }
    k[3] == "platform" && k[4] == "architecture" { ar[k[2]] = v }
    k[3] == "platform" && k[4] == "os" { os[k[2]] = v }
    END { for (i = 0; (i "") in dg; i++) if (ar[i] == arch && os[i] == "linux") { print dg[i]; exit } }
  ' "$WORK/top.flat")"
  [ -n "$manifest_digest" ] || die "image $IMAGE has no manifest for linux/$ARCH"
  fetch "$BASE/manifests/$manifest_digest" "$WORK/manifest.json" "$ACCEPT"
  verify "$WORK/manifest.json" "$manifest_digest" "linux/$ARCH manifest of $IMAGE"
  json_flat <"$WORK/manifest.json" >"$WORK/manifest.flat" || die "manifest of $IMAGE is not JSON"
else
  mv "$WORK/top.flat" "$WORK/manifest.flat"
fi
# Layers top-down: the upper layer wins (whiteouts are not interpreted; agent images have one layer).
layers="$(awk -F= '
  { split($1, k, "."); if (k[1] == "layers" && k[3] == "digest") { n++; l[n] = substr($0, length($1) + 2) } }
  END { for (i = n; i > 0; i--) print l[i] }' "$WORK/manifest.flat")"
[ -n "$layers" ] || die "manifest of $IMAGE has no layers"

# --- find the binary and install it atomically ------------------------------------------------
# Layers are unpacked into a staging dir inside /opt/bin, so the final step is a rename on the
# same filesystem (no 100 MB copy) and a crash leaves only a hidden staging dir behind.
mkdir -p "$BIN_DIR" || die "cannot create $BIN_DIR"
STAGED="$(mktemp -d "$BIN_DIR/.gardener-node-agent.XXXXXX")" || die "cannot create a staging dir in $BIN_DIR"
found=""
bad_tar=""
for layer in $layers; do
  case "$layer" in sha256:????????????????????????????????????????????????????????????????) ;; *) die "bad layer digest $layer" ;; esac
  fetch "$BASE/blobs/$layer" "$WORK/layer" "application/octet-stream"
  verify "$WORK/layer" "$layer" "layer $layer of $IMAGE"
  # One pass over the layer (GNU tar detects the compression); no match is exit status 2.
  if tar -xf "$WORK/layer" -C "$STAGED" --no-same-owner --no-same-permissions --wildcards '*gardener-node-agent' 2>/dev/null; then
    for member in gardener-node-agent ko-app/gardener-node-agent; do
      if [ -f "$STAGED/$member" ] && [ ! -L "$STAGED/$member" ]; then
        found="$STAGED/$member"
        break 2
      fi
    done
  else
    # Either no match or a broken archive: never use what a failed extraction left behind.
    bad_tar="$layer"
  fi
  rm -rf "$STAGED"/* "$STAGED"/.[!.]* "$WORK/layer"
done
[ -n "$found" ] || die "image $IMAGE contains neither /gardener-node-agent nor /ko-app/gardener-node-agent as a regular file${bad_tar:+ (or layer $bad_tar is not a readable tar)}"
chmod 0755 "$found" || die "cannot chmod $found"
sync "$found" 2>/dev/null || sync
mv -f "$found" "$BIN" || die "cannot move the binary to $BIN"
rm -rf "$STAGED" "$WORK"
STAGED=""
WORK=""
echo "> Installed $BIN from $IMAGE (linux/$ARCH)"

[ "${GNA_EXEC:-1}" = "0" ] && exit 0
exec "$BIN" bootstrap --config-dir="$CONFIG_DIR"
