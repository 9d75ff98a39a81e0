import { stringify } from "yaml";
import { guardLines, markerLines, unitActivation } from "./bash.ts";
import type { ResolvedFile, ResolvedUnit } from "./content.ts";
import { octalMode } from "./content.ts";

interface WriteFile {
  path: string;
  encoding?: "b64";
  content: string;
  owner: "root:root";
  permissions?: string;
}

const b64 = (data: Uint8Array | string): string => Buffer.from(data).toString("base64");

/**
 * The same provision OSC as a `#cloud-config` document (our addition; the spec's renderer only emits bash).
 * Files, units and drop-ins become `write_files` (b64, owner root, permissions as octal string; units
 * keep cloud-init's default 0644 like the bash form, which never chmods them). Unencoded files stay
 * plain text with the trailing newline the bash heredoc adds, so MCM can substitute placeholders.
 * Run-once choice: cloud-init already runs write_files and runcmd once per instance; runcmd also carries
 * the bash form's guard on /var/lib/osc/provision-osc-applied, so a node on which a provision OSC was
 * applied before (by either form) never gets its units re-enabled/restarted, and it sets the marker.
 * write_files cannot be made conditional in cloud-config; that is the one difference to the bash form.
 */
export function renderCloudConfig(files: readonly ResolvedFile[], units: readonly ResolvedUnit[]): string {
  const writeFiles: WriteFile[] = files.map((f) => ({
    path: f.path,
    ...(f.transmitUnencoded ? { content: `${new TextDecoder().decode(f.data)}\n` } : { encoding: "b64" as const, content: b64(f.data) }),
    owner: "root:root",
    ...(f.permissions === undefined ? {} : { permissions: octalMode(f.permissions) }),
  }));
  for (const u of units) {
    const unitPath = `/etc/systemd/system/${u.name}`;
    if (u.content !== undefined) writeFiles.push({ path: unitPath, encoding: "b64", content: b64(u.content), owner: "root:root" });
    for (const d of u.dropIns) {
      writeFiles.push({ path: `${unitPath}.d/${d.name}`, encoding: "b64", content: b64(d.content), owner: "root:root" });
    }
  }
  const script = [...guardLines, "systemctl daemon-reload", ...unitActivation(units), ...markerLines, ""].join("\n");
  const doc = { write_files: writeFiles, runcmd: [script] };
  return `#cloud-config\n${stringify(doc, { indentSeq: false, lineWidth: 0, defaultStringType: "PLAIN", defaultKeyType: "PLAIN" })}`;
}
