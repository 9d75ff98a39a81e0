import type { Kube, KubeObject } from "../kube/index.ts";
import { errorText } from "../log/index.ts";
import type { Command, CommandContext } from "./command.ts";
import type { AgentEnv } from "./env.ts";
import { UsageError } from "./errors.ts";
import { readInputFile } from "./input-file.ts";

/** What `diff` previews: the OSC, its checksum, and (online) the Secret and the Node. */
interface DiffInput {
  readonly osc: Uint8Array;
  readonly checksum: string;
  readonly source: string;
  readonly online?: {
    readonly kube: Kube;
    readonly secret: KubeObject;
    readonly node: KubeObject | undefined;
  };
  readonly hostName: string;
}

async function offlineInput(ctx: CommandContext): Promise<DiffInput> {
  const oscPath = ctx.flags["osc"] ?? "";
  if (oscPath === "") throw new UsageError("diff --offline needs an OSC file: diff --offline [--root DIR] FILE");
  const osc =
    oscPath === "-" ? new Uint8Array(await new Response(Bun.stdin.stream()).arrayBuffer()) : await readInputFile(oscPath, "OSC file");
  // gardenlet's checksum/data-script is the sha256 of osc.yaml.
  const checksum = new Bun.CryptoHasher("sha256").update(osc).digest("hex");
  return { osc, checksum, source: oscPath === "-" ? "stdin" : oscPath, hostName: "" };
}

async function onlineInput(ctx: CommandContext, env: AgentEnv): Promise<DiffInput> {
  const { loadCommandConfig } = await import("./startup.ts");
  const { createHostFs } = await import("../host/index.ts");
  const { nodeClient, readNodeView } = await import("./node-view.ts");
  const { hostNameOf } = await import("./agent/host-facts.ts");
  const { secretValue } = await import("../controllers/operatingsystemconfig/plan/content.ts");
  const { config } = await loadCommandConfig(ctx);
  const kube = await nodeClient(config, createHostFs(ctx.root), env);
  const secretName = config.controllers.operatingSystemConfig.secretName;
  const hostName = hostNameOf(env);
  const { secret, node } = await readNodeView(kube, secretName, hostName, ctx.signal);
  if (secret === undefined) throw new Error(`secret kube-system/${secretName} with the operating system config does not exist`);
  // Same reading as the controller's (reconcile.ts): data key osc.yaml, checksum annotation.
  const osc = secretValue(secret, "osc.yaml");
  if (osc === undefined) throw new Error(`no osc.yaml key found in secret kube-system/${secretName}`);
  const checksum = secret.metadata.annotations?.["checksum/data-script"] ?? "";
  if (checksum === "") throw new Error(`secret kube-system/${secretName} has no checksum/data-script annotation`);
  return { osc, checksum, source: `secret kube-system/${secretName}`, online: { kube, secret, node }, hostName };
}

async function runDiff(ctx: CommandContext): Promise<number> {
  const output = ctx.flags["output"] ?? "text";
  if (output !== "text" && output !== "json")
    throw new UsageError(`invalid argument ${JSON.stringify(output)} for --output (supported: text, json)`);
  const offline = ctx.flags["offline"] === "true";
  if (!offline && ctx.explicitFlags.has("osc")) throw new UsageError("an OSC file is read only with --offline");
  const { parseAgentEnv } = await import("./env.ts");
  const env = parseAgentEnv(ctx.env);
  const input = offline ? await offlineInput(ctx) : await onlineInput(ctx, env);

  const { decodeOsc } = await import("../osc/index.ts");
  const { createHostFs } = await import("../host/index.ts");
  const { previewApply, hasChanges } = await import("../controllers/operatingsystemconfig/preview/preview.ts");
  const { realClock } = await import("../clock/index.ts");
  const { machineArch } = await import("../registry/platform.ts");
  const preview = await previewApply(
    {
      host: createHostFs(ctx.root),
      osc: decodeOsc(input.osc),
      checksum: input.checksum,
      hostName: input.hostName,
      processPath: env.processPath,
      kube: input.online?.kube,
      arch: ctx.flags["arch"] || machineArch(),
      node: input.online?.node,
      secret: input.online?.secret,
      clock: realClock,
      // The running agent's rollout timings (a test-only override) decide when a slot counts as stale.
      rolloutTimings: env.timings.rollout,
    },
    ctx.signal,
  );
  const changes = hasChanges(preview);
  if (output === "json") {
    ctx.stdout.write(`${JSON.stringify({ source: input.source, changes, ...preview }, null, 2)}\n`);
  } else {
    const { formatPreview } = await import("./diff-format.ts");
    ctx.stdout.write(formatPreview(preview, input.source));
  }
  return changes ? 1 : 0;
}

/**
 * `gardener-node-agent diff`: a dry run of the next apply on this node. Exit 0 = nothing to do,
 * 1 = changes, 2 = error (like diff(1) and `kubectl diff`). Writes nothing.
 */
export const command: Command = {
  name: "diff",
  summary: "Show what the next apply would change on this node (dry run; exit 0 none, 1 changes, 2 error)",
  usage: [
    "diff [-o text|json]                       the OSC Secret, read with the node's own credentials",
    "diff --offline [--root DIR] [-o json] FILE   an OSC file against the state under --root (image roots)",
    "Lists files to create, change or delete (mode, size, unified diff; secretRef files and files with mode",
    '0600 or stricter only as "content differs, N bytes"), drop-ins, units to enable, disable, restart or',
    "stop, the containerd restart, whether the agent restarts itself, and the gates (hold, serial lock, rollout",
    "slot, drain, static pods) that would hold the apply or its checksum; offline the API gates are not checked;",
    "and whether the agent has staged the version's images and secrets (staged, staging, failed and why).",
    "Compares against last-applied-osc.yaml and resumes an interrupted change set like the agent. Writes nothing.",
  ].join("\n"),
  flags: [
    { name: "offline", kind: "bool", default: "false", usage: "read the OSC from FILE instead of the API server" },
    {
      name: "osc",
      kind: "string",
      default: "",
      usage: "OperatingSystemConfig file for --offline, '-' for stdin; also the bare argument",
      positional: true,
    },
    { name: "output", short: "o", kind: "string", default: "text", usage: "output format: text or json" },
    { name: "arch", kind: "string", default: "", usage: "architecture for the agent binary check (default: this machine's)" },
  ],
  async run(ctx: CommandContext): Promise<number> {
    try {
      return await runDiff(ctx);
    } catch (err) {
      // diff(1) convention: trouble is 2, never confused with "changes" (1).
      if (ctx.signal.aborted && err === ctx.signal.reason) throw err;
      ctx.stderr.write(`error: ${errorText(err)}${err instanceof UsageError ? ` (see 'gardener-node-agent diff --help')` : ""}\n`);
      return 2;
    }
  },
};
