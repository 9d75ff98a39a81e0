import { errorText } from "../log/index.ts";
import type { Command, CommandContext } from "./command.ts";
import { UsageError } from "./errors.ts";
import type { StatusReport } from "./status-gather.ts";

/** How long `status` waits for the API server before it shows the local view only. */
const nodeViewTimeoutMs = 5_000;

async function gather(ctx: CommandContext): Promise<StatusReport> {
  const { createHostFs } = await import("../host/index.ts");
  const { localStatus, unitStates, nodeView } = await import("./status-gather.ts");
  const host = createHostFs(ctx.root);

  // The config names the Secret and the API server; without it the state files still tell most.
  let config: Awaited<ReturnType<typeof import("./startup.ts").loadCommandConfig>>["config"] | undefined;
  let configError: string | undefined;
  try {
    const { loadCommandConfig } = await import("./startup.ts");
    config = (await loadCommandConfig(ctx)).config;
  } catch (err) {
    configError = `no agent configuration: ${errorText(err)}`;
  }
  const secretName = config?.controllers.operatingSystemConfig.secretName;
  const local = await localStatus(host, secretName === undefined ? undefined : `kube-system/${secretName}`);

  const { createDbusSystemd } = await import("../systemd/dbus.ts");
  const { nopLogger } = await import("../log/index.ts");
  const { parseAgentEnv } = await import("./env.ts");
  const env = parseAgentEnv(ctx.env);
  const address = env.dbusAddress;
  const units = await unitStates(
    host,
    () => createDbusSystemd({ ...(address !== undefined ? { address } : {}), log: nopLogger, callTimeoutMs: 5_000 }),
    ctx.signal,
  );

  let node: StatusReport["node"];
  let nodeError = configError;
  if (config !== undefined && secretName !== undefined) {
    try {
      const { nodeClient, readNodeView } = await import("./node-view.ts");
      const { hostNameOf } = await import("./agent/host-facts.ts");
      const kube = await nodeClient(config, host, env);
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(nodeViewTimeoutMs)]);
      const view = await readNodeView(kube, secretName, hostNameOf(env), signal);
      if (view.node !== undefined) node = await nodeView(view.node, view.secret);
      else nodeError = "no Node registered for this machine yet";
    } catch (err) {
      // Works without the API server: the local state is the answer then.
      nodeError = `API server not reachable: ${errorText(err)}`;
    }
  }
  return {
    ...local,
    units: units.units,
    ...(units.error !== undefined ? { unitsError: units.error } : {}),
    ...(node !== undefined ? { node } : {}),
    ...(node === undefined && nodeError !== undefined ? { nodeError } : {}),
  };
}

/** `gardener-node-agent status`: what is applied, pending and why, the units and the last failure. */
export const command: Command = {
  name: "status",
  summary: "Show what is applied, what is pending and why, the managed units and the last failure",
  usage: [
    "status [-o text|json]",
    "Reads the agent's state files under --root (last applied, the resumable change set, the last apply and",
    "failure, the pending version's staging state: staged, staging or failed and why, the disruption policy",
    "file), asks systemd for the live state of the managed units, and adds the Node's view (condition",
    "OperatingSystemConfigApplied, checksum, hold, maintenance window, apply history) when the API server is",
    "reachable.",
    "Works without the API server and without systemd. Writes nothing.",
  ].join("\n"),
  flags: [{ name: "output", short: "o", kind: "string", default: "text", usage: "output format: text or json" }],
  async run(ctx: CommandContext): Promise<number> {
    const output = ctx.flags["output"] ?? "text";
    if (output !== "text" && output !== "json")
      throw new UsageError(`invalid argument ${JSON.stringify(output)} for --output (supported: text, json)`);
    const report = await gather(ctx);
    if (output === "json") {
      ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } else {
      const { formatStatus } = await import("./status-format.ts");
      ctx.stdout.write(formatStatus(report));
    }
    return 0;
  },
};
