#!/usr/bin/env bash
# Builds (or reuses) the cached Debian bookworm base image for the real-VM e2e.
#
#   bash test/e2e/image.sh            # prints the cache dir on success
#
# Output in $GNA_E2E_CACHE (default /var/cache/gna-e2e):
#   base.raw     ext4 root filesystem image (guest sees it as /dev/vda, used as qcow2 backing file)
#   vmlinuz      kernel copied out of the rootfs (booted with qemu -kernel)
#   initrd.img   slim initrd (virtio + ext4 only)
#   stamp        sha256 of the recipe (packages + build functions): a changed recipe rebuilds the image
#   debs/        debootstrap package cache (kept between rebuilds)
#
# Environment: GNA_E2E_CACHE (cache dir), GNA_E2E_MIRROR (Debian mirror; default: from /etc/apt/sources*),
# GNA_E2E_REBUILD=1 (force a rebuild).
set -euo pipefail

CACHE="${GNA_E2E_CACHE:-/var/cache/gna-e2e}"
SUITE=bookworm
IMAGE_SIZE=3G
# dbus: the agent talks to systemd over the system bus; containerd: the init unit Requires= it (spec §3.1);
# python3-cffi-backend: without it cloud-init's dependencies fail to configure (virtual package).
PACKAGES=systemd,systemd-sysv,linux-image-amd64,initramfs-tools,cloud-init,python3-cffi-backend,curl,ca-certificates,e2fsprogs,util-linux,iproute2,udev,kmod,ifupdown,isc-dhcp-client,dbus,containerd,procps

log() { printf '[image %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# The first non-security Debian mirror named in the machine's apt sources (deb822 or one-line format).
detect_mirror() {
  local uri
  uri=$(
    {
      grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{for (i = 2; i <= NF; i++) print $i}'
      grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | awk '{print ($2 ~ /^\[/) ? $4 : $3}'
    } | grep -v -- '-security' | grep -E '^https?://' | head -n1
  )
  printf '%s\n' "${uri:-http://deb.debian.org/debian}"
}

# The recipe = package set + the build functions (declare -f drops comments, so editing prose does not rebuild).
recipe_hash() {
  { printf '%s\n' "$SUITE" "$IMAGE_SIZE" "$PACKAGES"; declare -f post_config slim_initrd build; } | sha256sum | cut -d' ' -f1
}

image_is_current() {
  [[ -z "${GNA_E2E_REBUILD:-}" && -s "$CACHE/base.raw" && -s "$CACHE/vmlinuz" && -s "$CACHE/initrd.img" &&
     -f "$CACHE/stamp" && "$(cat "$CACHE/stamp")" == "$(recipe_hash)" ]]
}

post_config() {
  local root=$1
  printf '/dev/vda / ext4 defaults 0 1\n' >"$root/etc/fstab"
  printf 'debian\n' >"$root/etc/hostname"
  printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
  # The init unit has EnvironmentFile=/etc/environment without "-": it must exist.
  touch "$root/etc/environment"
  mkdir -p "$root/etc/cloud/cloud.cfg.d"
  cat >"$root/etc/cloud/cloud.cfg.d/99-gna-e2e.cfg" <<'EOF'
datasource_list: [ NoCloud, None ]
locale: C.UTF-8
EOF
  # Slim initrd: only what mounts /dev/vda; everything else loads from the rootfs (saves ~20 s of boot).
  mkdir -p "$root/etc/initramfs-tools/conf.d"
  printf 'MODULES=list\nCOMPRESS=gzip\n' >"$root/etc/initramfs-tools/conf.d/gna-e2e.conf"
  printf '%s\n' virtio_pci virtio_blk ext4 crc32c_generic >"$root/etc/initramfs-tools/modules"
  # Periodic jobs only steal CPU from a TCG guest.
  local unit
  for unit in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer; do
    ln -sf /dev/null "$root/etc/systemd/system/$unit"
  done
  # Every VM made from this image must get its own machine-id: empty file = generate at first boot.
  : >"$root/etc/machine-id"
  rm -f "$root/var/lib/dbus/machine-id"
  ln -s /etc/machine-id "$root/var/lib/dbus/machine-id"
  rm -f "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*_Packages
}

slim_initrd() {
  local root=$1
  mount -t proc proc "$root/proc"
  mount -t sysfs sysfs "$root/sys"
  mount --bind /dev "$root/dev"
  local rc=0
  chroot "$root" update-initramfs -u -k all >&2 || rc=$?
  umount "$root/dev" "$root/sys" "$root/proc"
  return "$rc"
}

build() {
  local work=$CACHE/build
  local root=$work/rootfs
  local mirror
  mirror=${GNA_E2E_MIRROR:-$(detect_mirror)}
  rm -rf "$work"
  mkdir -p "$root" "$CACHE/debs"
  log "debootstrap $SUITE from $mirror (minbase + $PACKAGES)"
  debootstrap --variant=minbase --cache-dir="$CACHE/debs" --include="$PACKAGES" "$SUITE" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -n 30 "$work/debootstrap.log" >&2
    return 1
  }
  log "post-config"
  post_config "$root"
  log "slim initrd"
  slim_initrd "$root"
  cp "$(readlink -f "$root/vmlinuz")" "$work/vmlinuz"
  cp "$(readlink -f "$root/initrd.img")" "$work/initrd.img"
  log "mkfs.ext4 -d ($IMAGE_SIZE)"
  mkfs.ext4 -q -F -L gna-e2e-root -d "$root" "$work/base.raw" "$IMAGE_SIZE"
  # Replace atomically enough: stamp last, so an interrupted build is never taken as current.
  rm -f "$CACHE/stamp"
  mv -f "$work/base.raw" "$work/vmlinuz" "$work/initrd.img" "$CACHE/"
  recipe_hash >"$CACHE/stamp"
  rm -rf "$work"
}

main() {
  mkdir -p "$CACHE"
  exec 9>"$CACHE/.lock"
  flock 9
  if image_is_current; then
    log "reusing $CACHE/base.raw"
  else
    local start=$SECONDS
    # stdout carries only the cache dir (callers capture it); tools like mkfs.ext4 -d talk on stdout.
    build >&2
    log "built $CACHE/base.raw in $((SECONDS - start)) s"
  fi
  printf '%s\n' "$CACHE"
}

main "$@"
