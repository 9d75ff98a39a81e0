import type { ResolvedFile, ResolvedUnit } from "./content.ts";
import { octalMode } from "./content.ts";

const b64 = (data: Uint8Array | string): string => Buffer.from(data).toString("base64");
const dirname = (path: string): string => {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
};

/** Files part of the script (spec §12.1, upstream FilesToDiskScript). */
export function filesToDiskScript(files: readonly ResolvedFile[]): string {
  let out = "";
  for (const f of files) {
    out += `\nmkdir -p "${dirname(f.path)}"\n`;
    out += f.transmitUnencoded
      ? `\ncat << EOF > "${f.path}"\n${new TextDecoder().decode(f.data)}\nEOF`
      : `\ncat << EOF | base64 -d > "${f.path}"\n${b64(f.data)}\nEOF`;
    if (f.permissions !== undefined) out += `\nchmod "${octalMode(f.permissions)}" "${f.path}"`;
  }
  return out;
}

/** Units part of the script (spec §12.2, upstream UnitsToDiskScript). Units are never chmod-ed. */
export function unitsToDiskScript(units: readonly ResolvedUnit[]): string {
  let out = "";
  for (const u of units) {
    const unitPath = `/etc/systemd/system/${u.name}`;
    if (u.content !== undefined) out += `\n\ncat << EOF | base64 -d > "${unitPath}"\n${b64(u.content)}\nEOF`;
    if (u.dropIns.length > 0) {
      out += `\nmkdir -p "${unitPath}.d"`;
      for (const d of u.dropIns) out += `\n\ncat << EOF | base64 -d > "${unitPath}.d/${d.name}"\n${b64(d.content)}\nEOF`;
    }
  }
  return out;
}

/** Activation lines for every unit, regardless of `command`/`enable` (spec §12.3). */
export const unitActivation = (units: readonly ResolvedUnit[]): string[] =>
  units.map((u) => `systemctl enable '${u.name}' && systemctl restart --no-block '${u.name}'`);

/** Whole script before wrapping (spec §12.3). */
export function assembleScript(files: readonly ResolvedFile[], units: readonly ResolvedUnit[]): string {
  return (
    "#!/bin/bash\n" +
    filesToDiskScript(files) +
    "\n" +
    unitsToDiskScript(units) +
    "\nsystemctl daemon-reload\n" +
    unitActivation(units)
      .map((l) => `${l}\n`)
      .join("")
  );
}

const provisionMarker = "/var/lib/osc/provision-osc-applied";

export const guardLines = [
  `if [ -f "${provisionMarker}" ]; then`,
  '  echo "Provision OSC already applied, exiting..."',
  "  exit 0",
  "fi",
] as const;

export const markerLines = ["mkdir -p /var/lib/osc", `touch ${provisionMarker}`] as const;

/** Run-once wrapper (spec §12.4, upstream WrapProvisionOSCIntoOneshotScript). */
export function wrapProvisionOscIntoOneshotScript(script: string): string {
  const lines = script.split("\n");
  let head = 0;
  while (head < lines.length && (lines[head] ?? "").startsWith("#")) head++;
  return [...lines.slice(0, head), ...guardLines, "", ...lines.slice(head), "", ...markerLines, ""].join("\n");
}
