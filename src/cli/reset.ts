import type { Command, CommandContext } from "./command.ts";
import { errorText } from "../log/index.ts";

/** CRI endpoint of containerd (upstream's hard-coded reset endpoint); resolved under --root. */
const criSocket = "/var/run/containerd/containerd.sock";
/** Upstream's CRI connection and call timeout. */
const criTimeoutMs = 2_000;

/**
 * `gardener-node-agent reset`: wipe what the agent put on this node (spec §10) — stop the agent and
 * kubelet, stop and remove every pod sandbox, stop and disable the units of the last-applied OSC and
 * remove its files, empty /var/lib/gardener-node-agent and /var/lib/kubelet.
 */
export const command: Command = {
  name: "reset",
  summary: "Remove gardener-node-agent's artefacts from this node",
  usage: [
    "Stops gardener-node-agent.service and kubelet.service, stops and removes every pod sandbox through the CRI",
    `on ${criSocket} (2 s timeout, up to 5 attempts each), stops and disables every unit of the last-applied`,
    "OperatingSystemConfig and removes its files, then empties /var/lib/gardener-node-agent and, after unmounting",
    "everything below it, /var/lib/kubelet. Progress goes to stderr; errors are collected and exit 1.",
  ].join("\n"),
  flags: [],
  async run(ctx: CommandContext): Promise<number> {
    const [{ createHostFs, createMounts }, startup, reset, cri] = await Promise.all([
      import("../host/index.ts"),
      import("./startup.ts"),
      import("../reset/index.ts"),
      import("../cri/index.ts"),
    ]);
    const host = createHostFs(ctx.root);
    // Like upstream, reset reads and validates the whole config first.
    const loaded = await startup.loadCommandConfig(ctx);
    const log = await startup.startCommandLogger(ctx, loaded, "gardener-node-reset");

    const { createDbusSystemd } = await import("../systemd/dbus.ts");
    const address = ctx.env["DBUS_SYSTEM_BUS_ADDRESS"];
    const systemd = await createDbusSystemd({ log, ...(address === undefined || address === "" ? {} : { address }) });
    try {
      await reset.resetNode(
        {
          host,
          systemd,
          connectCri: (signal) => cri.connectCriRuntime(`unix://${host.resolve(criSocket)}`, criTimeoutMs, signal),
          mounts: createMounts(),
          log,
          reporter: {
            started: (task) => ctx.stderr.write(`[reset] ${task}: started\n`),
            finished: (task, outcome, err) =>
              ctx.stderr.write(`[reset] ${task}: ${outcome}${err === undefined ? "" : ` (${errorText(err)})`}\n`),
          },
        },
        ctx.signal,
      );
    } finally {
      systemd.close();
    }
    ctx.stdout.write(`\n${reset.successMessage}\n`);
    return 0;
  },
};
