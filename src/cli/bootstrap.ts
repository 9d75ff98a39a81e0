import type { Command, CommandContext } from "./command.ts";

/**
 * `gardener-node-agent bootstrap`: read and validate the config, then install, enable and start
 * gardener-node-agent.service and hand over from gardener-node-init.service (spec §6).
 */
export const command: Command = {
  name: "bootstrap",
  summary: "Install and start gardener-node-agent.service on this node",
  usage: [
    "Formats the kubelet data volume when configured, writes /etc/systemd/system/gardener-node-agent.service,",
    "enables and starts it, disables gardener-node-init.service and checks that the API server is reachable.",
  ].join("\n"),
  flags: [],
  async run(ctx: CommandContext): Promise<number> {
    const [{ createHostFs }, { readApiServerConfig }, startup, bootstrapModule] = await Promise.all([
      import("../host/index.ts"),
      import("../config/index.ts"),
      import("./startup.ts"),
      import("../bootstrap/index.ts"),
    ]);
    const host = createHostFs(ctx.root);
    const loaded = await startup.loadCommandConfig(ctx);
    const { config } = loaded;
    const log = await startup.startCommandLogger(ctx, loaded, "gardener-node-init");

    const { createDbusSystemd } = await import("../systemd/dbus.ts");
    const address = ctx.env["DBUS_SYSTEM_BUS_ADDRESS"];
    const systemd = await createDbusSystemd({ log, ...(address === undefined || address === "" ? {} : { address }) });
    try {
      const probe = bootstrapModule.createConnectivityProbe({
        host,
        // Fixed dir, decoded but not validated (spec §6.4, scenario 39).
        loadEndpoint: () => readApiServerConfig({ fs: host, version: ctx.version }),
      });
      await bootstrapModule.bootstrap(
        { host, systemd, log, runner: bootstrapModule.createProcessRunner(), probe, stdout: ctx.stdout },
        config,
        ctx.signal,
      );
    } finally {
      systemd.close();
    }
    return 0;
  },
};
