import { stringify } from "yaml";
import { guardLines, markerLines, unitActivation } from "./bash.ts";
import type { ResolvedFile, ResolvedUnit } from "./content.ts";
import { octalMode } from "./content.ts";

/** Where the packed form's script lands; cloud-init's runcmd runs it once per instance. */
export const packedScriptPath = "/var/lib/osc/provision-osc.sh";

const delimiter = "GNA_EOF";
const b64 = (data: Uint8Array | string): string => Buffer.from(data).toString("base64");
const dirname = (path: string): string => path.slice(0, Math.max(path.lastIndexOf("/"), 1));

/** UTF-8 text without NUL and without a line equal to the heredoc delimiter: placed as it is. */
function asText(data: Uint8Array): string | undefined {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(data);
  } catch {
    return undefined; // not UTF-8: the caller falls back to base64
  }
  if (text.includes("\0") || text.split("\n").includes(delimiter)) return undefined;
  return text;
}

/**
 * Shell lines that write `data` to `path` byte for byte. Text goes into a quoted heredoc (no expansion),
 * so gzip sees the text itself; text without a final newline goes through `$(…)`, which removes exactly
 * the one newline the heredoc adds. Anything else is base64 as in the bash form.
 */
function placeFile(path: string, data: Uint8Array): string {
  if (data.length === 0) return `: > "${path}"`;
  const text = asText(data);
  if (text === undefined) return `base64 -d > "${path}" << '${delimiter}'\n${b64(data)}\n${delimiter}`;
  if (text.endsWith("\n")) return `cat > "${path}" << '${delimiter}'\n${text}${delimiter}`;
  return `printf %s "$(cat << '${delimiter}'\n${text}\n${delimiter}\n)" > "${path}"`;
}

/** The provision script of the packed form: the bash form's steps with files as text, no placeholders. */
export function packedScript(files: readonly ResolvedFile[], units: readonly ResolvedUnit[]): string {
  const lines: string[] = ["#!/bin/bash", ...guardLines];
  for (const f of files) {
    lines.push(`mkdir -p "${dirname(f.path)}"`, placeFile(f.path, f.data));
    if (f.permissions !== undefined) lines.push(`chmod "${octalMode(f.permissions)}" "${f.path}"`);
  }
  for (const u of units) {
    const unitPath = `/etc/systemd/system/${u.name}`;
    if (u.content !== undefined) lines.push(placeFile(unitPath, new TextEncoder().encode(u.content)));
    if (u.dropIns.length > 0) lines.push(`mkdir -p "${unitPath}.d"`);
    for (const d of u.dropIns) lines.push(placeFile(`${unitPath}.d/${d.name}`, new TextEncoder().encode(d.content)));
  }
  lines.push("systemctl daemon-reload", ...unitActivation(units), ...markerLines, "");
  return lines.join("\n");
}

/**
 * The provision OSC as a compact `#cloud-config` for `render --provision` (providers cap user data at
 * 16 KiB, and the CA bundle and the bootstrap token share that budget). Files marked
 * `transmitUnencoded` (the MCM placeholders) stay plain `write_files` entries so machine-controller-manager
 * can still find and replace them; everything else is one script, gzip-compressed and written with
 * cloud-init's `encoding: gz+b64` (decompressed by cc_write_files), which runcmd executes. One gzip
 * stream for all files compresses better than one per file, and far better than base64 text.
 * The script carries the bash form's run-once guard and marker, so a node that applied a provision OSC
 * before writes and restarts nothing.
 */
export function renderPackedCloudConfig(files: readonly ResolvedFile[], units: readonly ResolvedUnit[]): string {
  const placeholders = files.filter((f) => f.transmitUnencoded);
  const script = packedScript(
    files.filter((f) => !f.transmitUnencoded),
    units,
  );
  const writeFiles = [
    ...placeholders.map((f) => ({
      path: f.path,
      content: `${new TextDecoder().decode(f.data)}\n`,
      ...(f.permissions === undefined ? {} : { permissions: octalMode(f.permissions) }),
    })),
    { path: packedScriptPath, encoding: "gz+b64", content: b64(Bun.gzipSync(script, { level: 9 })), permissions: "0700" },
  ];
  const doc = { write_files: writeFiles, runcmd: [packedScriptPath] };
  return `#cloud-config\n${stringify(doc, { indentSeq: false, lineWidth: 0, defaultStringType: "PLAIN", defaultKeyType: "PLAIN" })}`;
}
