import { stringify } from "yaml";

/** Mount point of the 9p results share inside the guest (see guest.sh). */
export const guestShare = "/mnt/e2e";

/**
 * Our own cloud-config part: mounts the 9p share and starts the exec channel (guest.sh) as early as cloud-init
 * allows (bootcmd, network stage), before the provision script of the user data runs.
 */
export function harnessCloudConfig(): string {
  const start = [
    "modprobe 9pnet_virtio",
    `mkdir -p ${guestShare}`,
    `mountpoint -q ${guestShare} || mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 host0 ${guestShare}`,
    // cloud-init.service runs before sysinit.target: a unit with default dependencies would wait for it (deadlock).
    `systemd-run --no-block --unit=gna-e2e-guest -p DefaultDependencies=no /bin/bash ${guestShare}/guest.sh`,
  ].join(" && ");
  return `#cloud-config\n${stringify({
    bootcmd: [["sh", "-c", start]],
    // The init unit reads /etc/environment: the host registry speaks plain HTTP (init.sh knob).
    write_files: [{ path: "/etc/environment", append: true, content: "GNA_REGISTRY_PLAIN_HTTP=1\n" }],
  })}`;
}

/**
 * Stand-in for the project's provision user data while the renderer / init.sh are missing: proves that the
 * guest reaches the registry and the API server through the restricted network, and reports to the share.
 */
export function pipelineProbeScript(opts: { apiServerUrl: string; registryUrl: string; caPem: string }): string {
  return `#!/bin/bash
out=${guestShare}/results
mkdir -p "$out"
cat > /tmp/e2e-ca.crt <<'PEM'
${opts.caPem.trim()}
PEM
curl -sS -m 20 -o "$out/registry.body" -w '%{http_code}' '${opts.registryUrl}/v2/' > "$out/registry.code" 2> "$out/registry.err"
curl -sS -m 20 --cacert /tmp/e2e-ca.crt -o "$out/apiserver.body" -w '%{http_code}' '${opts.apiServerUrl}/version' > "$out/apiserver.code" 2> "$out/apiserver.err"
echo done > "$out/probe.done"
`;
}

/** MIME multipart user data: cloud-init runs the cloud-config part and then the shell script part. */
export function multipartUserData(cloudConfig: string, script: string): string {
  const boundary = "==gna-e2e-boundary==";
  const part = (type: string, name: string, body: string): string =>
    `--${boundary}\nContent-Type: ${type}; charset="us-ascii"\nMIME-Version: 1.0\nContent-Transfer-Encoding: 7bit\nContent-Disposition: attachment; filename="${name}"\n\n${body}${body.endsWith("\n") ? "" : "\n"}`;
  return [
    `Content-Type: multipart/mixed; boundary="${boundary}"\nMIME-Version: 1.0\n\n`,
    part("text/cloud-config", "gna-e2e.cfg", cloudConfig),
    part("text/x-shellscript", "provision.sh", script),
    `--${boundary}--\n`,
  ].join("");
}

export function metaData(instanceId: string, hostname: string): string {
  return `instance-id: ${instanceId}\nlocal-hostname: ${hostname}\n`;
}

/** Guest NIC address (QEMU's default MAC, slirp's default guest IP). */
const guestMac = "52:54:00:12:34:56";

/**
 * Static address instead of DHCP: ifupdown's dhclient costs 30-70 s of a TCG boot. No gateway and no DNS: the
 * guest only talks to the guestfwd addresses, which are on-link in 10.0.2.0/24.
 */
export function networkConfig(): string {
  // Hand-written on purpose: cloud-init reads YAML 1.1, where an unquoted MAC is a base-60 integer.
  return `version: 1
config:
  - type: physical
    name: ens2
    mac_address: "${guestMac}"
    subnets:
      - type: static
        address: 10.0.2.15/24
`;
}
