import type { NodeAgentConfiguration } from "../config/index.ts";
import type { HostFs } from "../host/index.ts";
import type { KubeObject } from "../kube/index.ts";
import { errorText, type TextRedactor } from "../log/index.ts";
import type { Osc } from "../osc/index.ts";
import type { CommandContext, Writer } from "./command.ts";
import type { AgentEnv } from "./env.ts";

/** What `support` was asked for (flags already checked). */
export interface SupportOptions {
  /** Bundle path; "" → ./gardener-node-agent-support-<node>-<UTC time>.tar.gz */
  readonly output: string;
  readonly sinceMs: number;
  readonly maxBytes: number;
  readonly now: Date;
}

export interface SupportResult {
  readonly path: string;
  readonly bytes: number;
  readonly members: number;
  readonly leftOut: number;
}

/** The journal is bounded at 20 MiB (newest kept) whatever the total bound leaves. */
const journalBoundBytes = 20 * 1024 * 1024;
/** How long the API server may take for the Node and events before the bundle goes on without them. */
const apiTimeoutMs = 10_000;
/** Room kept for MANIFEST.txt, written last. */
const manifestReserveBytes = 32 * 1024;
/** A member in the tar: a 512-byte header and its data padded to 512-byte blocks. */
const padded = (n: number): number => 512 + Math.ceil(n / 512) * 512;
/** The tar end marker, the 10 KiB record padding, and gzip's worst case on incompressible data (+0.1%). */
const archiveSlack = (maxBytes: number): number => 1024 + 10_240 + Math.ceil(maxBytes / 1000) + 64;

const stateDirPath = "/var/lib/gardener-node-agent";

interface Member {
  readonly name: string;
  readonly data: Uint8Array;
  readonly about: string;
}

/** Members (every text through the redaction) and what was left out, with the reason. */
class Bundle {
  readonly members: Member[] = [];
  readonly leftOut: { what: string; why: string }[] = [];
  constructor(private readonly redact: TextRedactor) {}
  add(name: string, text: string, about: string): void {
    this.members.push({ name, data: new TextEncoder().encode(this.redact(text)), about });
  }
  /** Text the caller already passed through the same redaction (the journal, line by line). */
  addRedacted(name: string, text: string, about: string): void {
    this.members.push({ name, data: new TextEncoder().encode(text), about });
  }
  omit(what: string, why: string): void {
    this.leftOut.push({ what, why: this.redact(why) });
  }
  size(): number {
    return this.members.reduce((n, m) => n + padded(m.data.byteLength), 0);
  }
}

/** Captures what a command writes (status and diff run in this process with `-o json`). */
const capture = (): Writer & { text(): string } => {
  const parts: string[] = [];
  const dec = new TextDecoder();
  return { write: (d) => void parts.push(typeof d === "string" ? d : dec.decode(d)), text: () => parts.join("") };
};

/**
 * Replaces the inline content of every file in a state document (last-applied OSC, changes file) by
 * its size: the bundle lists files, it never carries their content. Unit and drop-in texts stay.
 */
function withoutFileContents(doc: unknown, depth = 0): unknown {
  if (doc === null || typeof doc !== "object") return doc;
  // No OSC nests this deep; whatever does is not shown rather than shown unchecked.
  if (depth > 20) return "[left out: nested too deep]";
  if (Array.isArray(doc)) return doc.map((x) => withoutFileContents(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc)) {
    if (k === "inline" && v !== null && typeof v === "object" && "data" in v) {
      const data = (v as { data?: unknown }).data;
      out[k] = { ...v, data: `[left out: ${typeof data === "string" ? data.length : 0} characters]` };
    } else out[k] = withoutFileContents(v, depth + 1);
  }
  return out;
}

const utcStamp = (d: Date): string =>
  d
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}Z$/, "Z");
const fileSafe = (s: string): string => s.replace(/[^A-Za-z0-9._-]/g, "_") || "unknown";
const mib = (n: number): string =>
  n >= 1024 * 1024 ? `${Number((n / (1024 * 1024)).toFixed(1))} MiB` : `${Number((n / 1024).toFixed(1))} KiB`;

async function loadConfig(ctx: CommandContext): Promise<{ config?: NodeAgentConfiguration; error?: string }> {
  try {
    const { loadCommandConfig } = await import("./startup.ts");
    return { config: (await loadCommandConfig(ctx)).config };
  } catch (err) {
    return { error: errorText(err) };
  }
}

async function stateFile(b: Bundle, host: HostFs, path: string, member: string, about: string, strip: boolean): Promise<void> {
  try {
    const text = await host.readText(path);
    if (text === undefined) {
      b.omit(member, `${path} does not exist`);
      return;
    }
    if (!strip) {
      b.add(member, text, about);
      return;
    }
    const { parse, stringify } = await import("yaml");
    b.add(member, stringify(withoutFileContents(parse(text))), about);
  } catch (err) {
    b.omit(member, `${path}: ${errorText(err)}`);
  }
}

/** `systemctl show`-style properties of each unit, through the agent's systemd port. */
async function unitProperties(b: Bundle, units: readonly string[], env: AgentEnv, signal: AbortSignal): Promise<void> {
  const { createDbusSystemd } = await import("../systemd/dbus.ts");
  const { nopLogger } = await import("../log/index.ts");
  let systemd: Awaited<ReturnType<typeof createDbusSystemd>> | undefined;
  const blocks: string[] = [];
  const failed: { unit: string; why: string }[] = [];
  try {
    systemd = await createDbusSystemd({
      ...(env.dbusAddress !== undefined ? { address: env.dbusAddress } : {}),
      log: nopLogger,
      callTimeoutMs: 5_000,
    });
    for (const unit of units) {
      try {
        const p = await systemd.unitProperties(unit, signal);
        const lines = [
          `Id=${unit}`,
          `LoadState=${p.loadState}`,
          `ActiveState=${p.activeState}`,
          `SubState=${p.subState}`,
          `UnitFileState=${p.unitFileState}`,
          `StateChangeTimestamp=${p.stateChangeTimestampMs > 0 ? new Date(p.stateChangeTimestampMs).toISOString() : ""}`,
          `InvocationID=${p.invocationId}`,
        ];
        if (unit.endsWith(".service")) lines.push(`Type=${await systemd.serviceType(unit, signal)}`);
        lines.push(`TriggeredBy=${(await systemd.triggeredBy(unit, signal)).join(" ")}`);
        blocks.push(lines.join("\n"));
      } catch (err) {
        if (signal.aborted) throw err;
        // The first unit failing means systemd itself is not there: one reason, not one per unit.
        if (blocks.length === 0 && failed.length === 0) throw err;
        failed.push({ unit, why: errorText(err) });
      }
    }
  } catch (err) {
    if (signal.aborted) throw err;
    b.omit("units/systemctl-show.txt", `systemd not reachable: ${errorText(err)}`);
    return;
  } finally {
    systemd?.close();
  }
  if (blocks.length > 0)
    b.add("units/systemctl-show.txt", `${blocks.join("\n\n")}\n`, "systemctl show-style properties of the managed units and the agent");
  for (const f of failed) b.omit(`units/systemctl-show.txt (${f.unit})`, f.why);
}

/** The journal of the units since `sinceMs`, newest kept within `bound` bytes, oldest first in the file. */
async function journal(
  b: Bundle,
  root: string,
  host: HostFs,
  units: readonly string[],
  sinceMs: number,
  bound: number,
  redact: TextRedactor,
): Promise<void> {
  const member = "journal/units.log";
  const dirs = ["/var/log/journal", "/run/log/journal"];
  const present = await Promise.all(dirs.map((d) => host.stat(d).catch(() => undefined)));
  if (root !== "/" && present.every((p) => p === undefined)) {
    b.omit(member, `no journal under the root (${dirs.join(", ")} missing)`);
    return;
  }
  const { readJournalNewestFirst } = await import("../systemd/journal-reader.ts");
  const lines: string[] = [];
  let bytes = 0;
  let truncatedAt: bigint | undefined;
  try {
    await readJournalNewestFirst(
      { root, units, sinceMs, fields: ["MESSAGE", "_SYSTEMD_UNIT", "UNIT", "SYSLOG_IDENTIFIER", "_PID"] },
      (e) => {
        const f = e.fields;
        const time = new Date(Number(e.realtimeUsec / 1000n)).toISOString();
        const ident = f["SYSLOG_IDENTIFIER"] ?? "";
        const pid = f["_PID"] !== undefined ? `[${f["_PID"]}]` : "";
        const line = `${time} ${f["_SYSTEMD_UNIT"] ?? f["UNIT"] ?? "-"} ${ident}${pid}: ${redact(f["MESSAGE"] ?? "")}\n`;
        const n = Buffer.byteLength(line);
        if (bytes + n > bound) {
          truncatedAt = e.realtimeUsec;
          return false;
        }
        lines.push(line);
        bytes += n;
        return true;
      },
    );
  } catch (err) {
    b.omit(member, `journal not readable: ${errorText(err)}`);
    if (lines.length === 0) return;
  }
  lines.reverse();
  b.addRedacted(
    member,
    lines.join(""),
    `journal of ${units.join(", ")} since ${new Date(sinceMs).toISOString()} (${lines.length} entries)`,
  );
  if (truncatedAt !== undefined) {
    b.omit(
      `${member} (older entries)`,
      `size bound ${mib(bound)} reached: entries at and before ${new Date(Number(truncatedAt / 1000n)).toISOString()} left out, the newest kept`,
    );
  }
}

/** The Node's conditions and annotations, and the agent's events about it (when the credentials may list them). */
async function nodeAndEvents(
  b: Bundle,
  ctx: CommandContext,
  host: HostFs,
  env: AgentEnv,
  config: NodeAgentConfiguration,
): Promise<{ nodeName?: string; reachable: boolean; why?: string }> {
  const { nodeClient } = await import("./node-view.ts");
  const { findNode } = await import("../controllers/shared/index.ts");
  const { hostNameOf } = await import("./agent/host-facts.ts");
  const { events } = await import("../kube/index.ts");
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(apiTimeoutMs)]);
  let node: KubeObject | undefined;
  let kube: Awaited<ReturnType<typeof nodeClient>>;
  try {
    kube = await nodeClient(config, host, env);
    node = await findNode(kube, { hostName: hostNameOf(env), nodeName: undefined }, signal);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    const why = `API server not reachable: ${errorText(err)}`;
    b.omit("node/node.json", why);
    b.omit("node/events.json", why);
    return { reachable: false, why };
  }
  if (node === undefined) {
    b.omit("node/node.json", "no Node registered for this machine yet");
    b.omit("node/events.json", "no Node registered for this machine yet");
    return { reachable: true };
  }
  const name = node.metadata.name ?? "";
  const status = (node as { status?: { conditions?: unknown } }).status;
  b.add(
    "node/node.json",
    `${JSON.stringify({ name, labels: node.metadata.labels ?? {}, annotations: node.metadata.annotations ?? {}, conditions: status?.conditions ?? [] }, null, 2)}\n`,
    "the Node's labels, annotations and conditions",
  );
  try {
    const list = await kube.list<KubeObject>(events, "default", {
      fieldSelector: `involvedObject.kind=Node,involvedObject.name=${name}`,
      signal,
    });
    const items = list.items
      .map((e) => e as KubeObject & { lastTimestamp?: string; eventTime?: string })
      .sort((x, y) => String(x.lastTimestamp ?? x.eventTime ?? "").localeCompare(String(y.lastTimestamp ?? y.eventTime ?? "")))
      .slice(-200);
    b.add("node/events.json", `${JSON.stringify(items, null, 2)}\n`, `the newest ${items.length} events about the Node`);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    // The node-agent authorizer lets the agent create events, not list them.
    b.omit(
      "node/events.json",
      `events not readable with the node's credentials (${errorText(err)}); the agent's journal has what it recorded`,
    );
  }
  return { nodeName: name, reachable: true };
}

/** Runs `status -o json` or `diff -o json` in this process; the output, or why there is none. */
async function runJson(ctx: CommandContext, name: "status" | "diff", timeoutMs: number): Promise<{ json?: string; error?: string }> {
  const mod = name === "status" ? await import("./status.ts") : await import("./diff.ts");
  const out = capture();
  const err = capture();
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
  const flags = { ...ctx.flags, output: "json", offline: "false", osc: "", arch: "" };
  try {
    const code = await mod.command.run({ ...ctx, command: name, flags, explicitFlags: new Set(), stdout: out, stderr: err, signal });
    if (name === "diff" && code === 2)
      return {
        error: err
          .text()
          .trim()
          .replace(/^error: /, ""),
      };
    return { json: out.text() };
  } catch (e) {
    if (ctx.signal.aborted) throw e;
    return { error: errorText(e) };
  }
}

/** Writes the tar.gz atomically (temp file, mode 0600, rename). */
async function writeArchive(path: string, members: readonly Member[], prefix: string): Promise<number> {
  const { rename, rm, writeFile, chmod } = await import("node:fs/promises");
  const { dirname, basename, join } = await import("node:path");
  const files: Record<string, Uint8Array> = {};
  for (const m of members) files[`${prefix}/${m.name}`] = m.data;
  const bytes = await new Bun.Archive(files, { compress: "gzip" }).bytes();
  const temp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}`);
  try {
    await writeFile(temp, bytes, { mode: 0o600, flag: "wx" });
    await chmod(temp, 0o600);
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  return bytes.byteLength;
}

function manifest(b: Bundle, header: readonly string[]): string {
  const out = [...header, "", "Members:"];
  for (const m of b.members) {
    const size = m.name === "MANIFEST.txt" ? "" : `${m.data.byteLength} bytes`;
    out.push(`  ${m.name.padEnd(38)} ${size.padStart(15)}  ${m.about}`);
  }
  out.push("", "Left out, and why:");
  for (const l of b.leftOut) out.push(`  ${l.what}: ${l.why}`);
  out.push(
    "  file contents: never included; files.json lists each managed file with mode, size and sha256",
    "  never included (no sha256 either): contents of secretRef files, files with mode 0600 or stricter,",
    "    token files, kubeconfigs, registry-auth.json, the bootstrap token and private keys; their values,",
    "    and token, key and password shapes, are replaced by [redacted] in every member, journal included",
  );
  return `${out.join("\n")}\n`;
}

/**
 * Collects the support bundle: status, diff, version, config, state files, units, journal, Node,
 * events and the managed-file list; then the manifest; then the tar.gz. A part that fails is listed
 * in the manifest and the bundle is still written.
 */
export async function writeSupportBundle(ctx: CommandContext, o: SupportOptions): Promise<SupportResult> {
  const progress = (msg: string) => ctx.stderr.write(`support: ${msg}\n`);
  const { createHostFs } = await import("../host/index.ts");
  const { parseAgentEnv } = await import("./env.ts");
  const { readLastApplied } = await import("../controllers/shared/index.ts");
  const { mergeUnits } = await import("../controllers/operatingsystemconfig/plan/merge.ts");
  const { hostNameOf } = await import("./agent/host-facts.ts");
  const { collectNodeSecrets } = await import("./support-secrets.ts");
  const { createTextRedactor } = await import("../log/redact-text.ts");
  const { redactFields } = await import("../log/redact.ts");
  const env = parseAgentEnv(ctx.env);
  const host = createHostFs(ctx.root);
  const hostName = hostNameOf(env);

  const { config, error: configError } = await loadConfig(ctx);
  let osc: Osc | undefined;
  let oscError: string | undefined;
  try {
    osc = await readLastApplied(host);
  } catch (err) {
    oscError = errorText(err);
  }
  progress("reading the managed files and what is secret");
  const secrets = await collectNodeSecrets(host, osc, hostName, config, [env.kubeconfig ?? "", config?.clientConnection.kubeconfig ?? ""]);
  const redact = createTextRedactor(secrets.values);
  const b = new Bundle(redact);

  b.add(
    "version.txt",
    `gardener-node-agent ${ctx.version}\nrevision ${ctx.revision}\nbun ${Bun.version}\nplatform ${process.platform}/${process.arch}\n`,
    "the agent's version",
  );
  if (config !== undefined) {
    const { configToDocument } = await import("../config/index.ts");
    const { stringify } = await import("yaml");
    b.add("config.yaml", stringify(redactFields(configToDocument(config))), "the agent's configuration as loaded (secret fields redacted)");
  } else b.omit("config.yaml", `no agent configuration: ${configError ?? ""}`);

  progress("status -o json");
  const status = await runJson(ctx, "status", 20_000);
  if (status.json !== undefined) b.add("status.json", status.json, "status -o json");
  else b.omit("status.json", status.error ?? "");

  let nodeName: string | undefined;
  let apiDown: string | undefined = config === undefined ? `no agent configuration: ${configError ?? ""}` : undefined;
  if (config !== undefined) {
    progress("the Node and its events");
    const n = await nodeAndEvents(b, ctx, host, env, config);
    nodeName = n.nodeName;
    if (!n.reachable) apiDown = n.why;
  }
  if (apiDown === undefined) {
    progress("diff -o json");
    const diff = await runJson(ctx, "diff", 30_000);
    if (diff.json !== undefined) b.add("diff.json", diff.json, "diff -o json: what the next apply would change");
    else b.omit("diff.json", diff.error ?? "");
  } else b.omit("diff.json", `needs the API server: ${apiDown}`);

  await stateFile(
    b,
    host,
    `${stateDirPath}/last-applied-osc.yaml`,
    "state/last-applied-osc.yaml",
    "the last applied OSC (file contents left out)",
    true,
  );
  await stateFile(
    b,
    host,
    `${stateDirPath}/last-computed-osc-changes.yaml`,
    "state/last-computed-osc-changes.yaml",
    "the changes file (file contents left out)",
    true,
  );
  await stateFile(
    b,
    host,
    `${stateDirPath}/apply-status.json`,
    "state/apply-status.json",
    "the apply status (last apply, success, failure, gate)",
    false,
  );
  if (oscError !== undefined) b.omit("managed units and files of last-applied-osc.yaml", oscError);

  b.add(
    "files.json",
    `${JSON.stringify(secrets.files, null, 2)}\n`,
    "managed files: mode, size, sha256 (none for secret files), never content",
  );

  const units = [...new Set([...(osc === undefined ? [] : mergeUnits(osc).map((u) => u.name)), "gardener-node-agent.service"])].sort();
  progress(`unit properties of ${units.length} unit(s)`);
  await unitProperties(b, units, env, ctx.signal);

  // The journal takes what the bound leaves, after everything else and the manifest.
  const budget = o.maxBytes - archiveSlack(o.maxBytes) - manifestReserveBytes - b.size() - padded(0) - 511;
  const bound = Math.min(journalBoundBytes, Math.max(0, budget));
  const sinceMs = o.now.getTime() - o.sinceMs;
  progress(`journal of ${units.length} unit(s) since ${new Date(sinceMs).toISOString()} (up to ${mib(bound)})`);
  await journal(b, ctx.root, host, units, sinceMs, bound, redact);

  // Still too large (the bound is smaller than the parts): drop the largest parts until it fits.
  while (b.size() + manifestReserveBytes + archiveSlack(o.maxBytes) > o.maxBytes && b.members.length > 0) {
    const largest = b.members.reduce((x, y) => (y.data.byteLength > x.data.byteLength ? y : x));
    b.members.splice(b.members.indexOf(largest), 1);
    b.omit(largest.name, `size bound ${mib(o.maxBytes)}: ${largest.data.byteLength} bytes did not fit`);
  }

  const node = nodeName ?? hostName;
  const stamp = utcStamp(o.now);
  const prefix = `gardener-node-agent-support-${fileSafe(node)}-${stamp}`;
  const path = o.output === "" ? `${prefix}.tar.gz` : o.output;
  const header = [
    "gardener-node-agent support bundle",
    `node       ${node}`,
    `created    ${o.now.toISOString()}`,
    `version    ${ctx.version}`,
    `root       ${ctx.root}`,
    `journal    since ${new Date(sinceMs).toISOString()}`,
    `size bound ${mib(o.maxBytes)}`,
  ];
  // The manifest lists itself too; its own size is unknown until written, so it is named without one.
  b.members.unshift({ name: "MANIFEST.txt", data: new Uint8Array(), about: "this list" });
  // Not redacted again: its reasons went through the redaction in omit(), the rest is this code's text.
  b.members[0] = { name: "MANIFEST.txt", data: new TextEncoder().encode(manifest(b, header)), about: "this list" };
  progress(`writing ${path}`);
  const bytes = await writeArchive(path, b.members, prefix);
  return { path, bytes, members: b.members.length, leftOut: b.leftOut.length };
}
