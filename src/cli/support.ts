import type { Command, CommandContext } from "./command.ts";
import { UsageError } from "./errors.ts";

const sizeUnits: Record<string, number> = { "": 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 };

/** `50M`, `200K`, `1G`, `1048576` (powers of 1024; an optional `i`/`B` is accepted: `50MiB`). */
function parseSize(text: string): number | undefined {
  const m = /^(\d+)\s*([KMG]?)(?:i?B)?$/i.exec(text.trim());
  if (m === null) return undefined;
  const n = Number(m[1]) * (sizeUnits[(m[2] ?? "").toUpperCase()] ?? 1);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** Smaller bounds cannot hold the manifest and the small members. */
const minBundleBytes = 128 * 1024;

/**
 * `gardener-node-agent support`: one tar.gz with what a person debugging this node needs, and
 * nothing secret. Writes only the bundle file.
 */
export const command: Command = {
  name: "support",
  summary: "Write a support bundle (tar.gz) for debugging this node; nothing secret leaves the node",
  usage: [
    "support [-o FILE] [--since DURATION] [--max-size SIZE]",
    "Writes one tar.gz (mode 0600; default ./gardener-node-agent-support-<node>-<UTC time>.tar.gz) holding:",
    "MANIFEST.txt (every member, and what was left out and why), status -o json, diff -o json (when the",
    "API server answers), the version and config (secret fields redacted), the state files (last-applied",
    "OSC and changes file without file contents, apply status), systemctl show-style properties of the",
    "managed units, their journal since --since (newest kept, at most 20 MiB), the Node's labels,",
    "annotations and conditions and its events, and files.json: each managed file's mode, size and sha256,",
    "never its content. Contents of secretRef files, files with mode 0600 or stricter, token files,",
    "kubeconfigs, registry-auth.json, the bootstrap token and private keys are never included; their",
    "values and token/key/password shapes are redacted in every member, journal lines included.",
    "Works without the API server and under --root. Exit 0 with the bundle even when parts failed (the",
    "manifest names them), 2 on a bad flag.",
  ].join("\n"),
  flags: [
    {
      name: "output",
      short: "o",
      kind: "string",
      default: "",
      usage: "bundle file (default ./gardener-node-agent-support-<node>-<UTC time>.tar.gz)",
    },
    { name: "since", kind: "string", default: "24h", usage: "journal entries since this long ago (Go duration: 24h, 90m)" },
    {
      name: "max-size",
      kind: "string",
      default: "50M",
      usage: "upper bound of the bundle's size in bytes (suffix K, M or G: powers of 1024)",
    },
  ],
  async run(ctx: CommandContext): Promise<number> {
    const { parseDuration } = await import("../config/index.ts");
    const sinceText = ctx.flags["since"] ?? "24h";
    let sinceMs: number;
    try {
      sinceMs = parseDuration(sinceText);
    } catch {
      throw new UsageError(`invalid argument ${JSON.stringify(sinceText)} for --since (a duration such as 24h or 90m)`);
    }
    if (!(sinceMs > 0)) throw new UsageError(`invalid argument ${JSON.stringify(sinceText)} for --since (must be positive)`);
    const sizeText = ctx.flags["max-size"] ?? "50M";
    const maxBytes = parseSize(sizeText);
    if (maxBytes === undefined)
      throw new UsageError(`invalid argument ${JSON.stringify(sizeText)} for --max-size (bytes, or with K, M or G)`);
    if (maxBytes < minBundleBytes) throw new UsageError(`invalid argument ${JSON.stringify(sizeText)} for --max-size (at least 128K)`);
    const output = ctx.flags["output"] ?? "";
    if (ctx.explicitFlags.has("output") && output === "") throw new UsageError("--output needs a file name");

    const { writeSupportBundle } = await import("./support-bundle.ts");
    const r = await writeSupportBundle(ctx, { output, sinceMs, maxBytes, now: new Date() });
    ctx.stderr.write(
      `support: wrote ${r.path} (${r.bytes} bytes, ${r.members} members${r.leftOut > 0 ? `, ${r.leftOut} part(s) left out: see MANIFEST.txt` : ""})\n`,
    );
    ctx.stdout.write(`${r.path}\n`);
    return 0;
  },
};
