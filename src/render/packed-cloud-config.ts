import { RenderError } from "./errors.ts";
import { stringify } from "yaml";
import { guardLines, markerLines, unitActivation } from "./bash.ts";
import type { ResolvedFile, ResolvedUnit } from "./content.ts";
import { octalMode } from "./content.ts";
import { gzipSmallest } from "./deflate.ts";

/** Where the packed form's script lands; cloud-init's runcmd runs it once per instance. */
const packedScriptPath = "/var/lib/osc/provision-osc.sh";

const delimiter = "EOF";
/** `text` as one double-quoted shell word. */
const dq = (text: string): string => `"${text.replace(/[\\"$`]/g, "\\$&")}"`;
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

/**
 * The provision script of the packed forms: the bash form's steps with files as text. `preamble` runs
 * right after the run-once guard (the gzip form places the placeholder files there); directories in
 * `made` exist by then.
 */
function packedScript(
  files: readonly ResolvedFile[],
  units: readonly ResolvedUnit[],
  preamble: readonly string[] = [],
  made = new Set<string>(),
): string {
  const lines: string[] = ["#!/bin/bash", ...guardLines, ...preamble];
  for (const f of files) {
    if (!made.has(dirname(f.path))) lines.push(`mkdir -p "${dirname(f.path)}"`);
    made.add(dirname(f.path));
    lines.push(placeFile(f.path, f.data));
    if (f.permissions !== undefined) lines.push(`chmod ${octalMode(f.permissions)} "${f.path}"`);
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
    { path: packedScriptPath, encoding: "gz+b64", content: b64(gzipSmallest(new TextEncoder().encode(script))), permissions: "0700" },
  ];
  const doc = { write_files: writeFiles, runcmd: [packedScriptPath] };
  return `#cloud-config\n${stringify(doc, { indentSeq: false, lineWidth: 0, defaultStringType: "PLAIN", defaultKeyType: "PLAIN" })}`;
}

/** Where cloud-init keeps the user data as it received it (raw, before decompression), mode 0600. */
const rawUserDataPath = "/var/lib/cloud/instance/user-data.txt";

const gzipMagicWithComment = " 1f 8b 08 10";

/**
 * The provision OSC as gzip-compressed user data (cloud-init decompresses user data that starts with the
 * gzip magic): one `#!/bin/bash` script holding every file as text. The placeholder files
 * (`transmitUnencoded`, MCM's `<<BOOTSTRAP_TOKEN>>` and `<<MACHINE_NAME>>`) cannot live in the
 * compressed stream, where MCM's plain text replacement would not find them; they go into the gzip
 * header's comment field (RFC 1952 FCOMMENT), one line each. The comment is zero-terminated and not
 * covered by the CRC, so MCM may replace a placeholder by a longer value without breaking the stream.
 * The script reads line N of the comment back from cloud-init's copy of the raw user data.
 * Bytes, not text: the provider API must carry binary user data (AWS, Azure, OpenStack base64-encode
 * it); where it must be a string (GCP metadata) use the cloud-config form.
 */
export function renderGzipUserData(files: readonly ResolvedFile[], units: readonly ResolvedUnit[]): Uint8Array {
  const placeholders = files.filter((f) => f.transmitUnencoded);
  const comment: string[] = [];
  files.forEach((f, i) => {
    if (!f.transmitUnencoded) return;
    const text = new TextDecoder().decode(f.data);
    // Latin-1 without control characters: the comment is ISO 8859-1, one line per file.
    if (!/^[\x20-\x7e\xa0-\xff]*$/.test(text)) {
      throw new RenderError(
        "invalid",
        `spec.files[${i}].content`,
        "a transmitUnencoded file in gzip user data must be one line of printable Latin-1 text",
      );
    }
    comment.push(text);
  });
  // One sed over the comment (from byte 11 on) writes line N into placeholder file N (`Nw PATH`).
  const modes = new Map<string, string[]>();
  for (const f of placeholders) {
    if (f.permissions !== undefined) modes.set(octalMode(f.permissions), [...(modes.get(octalMode(f.permissions)) ?? []), f.path]);
  }
  // mkdir -p of the deepest directories makes their parents too.
  const dirs = new Set(placeholders.map((f) => dirname(f.path)));
  const made = new Set([...dirs].flatMap((d) => d.split("/").map((_, i, parts) => parts.slice(0, i + 1).join("/"))));
  const preamble: string[] = [
    `U=${rawUserDataPath}`,
    `[ "$(od -An -N4 -tx1 $U)" = "${gzipMagicWithComment}" ] || { echo "$U: not this gzip user data" >&2; exit 1; }`,
    `mkdir -p ${[...dirs]
      .filter((d) => ![...dirs].some((o) => o.startsWith(`${d}/`)))
      .map(dq)
      .join(" ")}`,
    `tail -c +11 $U | sed -n ${placeholders.map((f, i) => `-e ${dq(`${i + 1}w ${f.path}`)}`).join(" ")}`,
    ...[...modes].map(([mode, paths]) => `chmod ${mode} ${paths.map(dq).join(" ")}`),
  ];
  const script = packedScript(
    files.filter((f) => !f.transmitUnencoded),
    units,
    placeholders.length > 0 ? preamble : [],
    made,
  );
  // deflate.ts: ~100 bytes smaller than libdeflate's level 12 here (the CA in a Huffman block of its own).
  const body = gzipSmallest(new TextEncoder().encode(script));
  if (placeholders.length === 0) return body;
  const header = body.subarray(0, 10);
  if (header[3] !== 0) throw new Error("gzip: unexpected header flags"); // gzipSmallest writes none
  const flagged = Uint8Array.from(header);
  flagged[3] = 0x10; // FCOMMENT
  const text = Buffer.from(`${comment.join("\n")}\n\0`, "latin1");
  return Buffer.concat([flagged, text, body.subarray(10)]);
}
