import type { Command, CommandContext } from "./command.ts";
import { UsageError } from "./errors.ts";
import { readInputFile } from "./input-file.ts";

/**
 * `gardener-node-agent apply --offline --root DIR osc.yaml`: lays an OSC into a mounted image
 * root for image builders — files, units and drop-ins written, units enabled through their
 * `[Install]` symlinks like `systemctl --root`, and the last-applied state recorded, so the first
 * boot finds the node up to date instead of re-applying and restarting everything.
 */
export const command: Command = {
  name: "apply",
  summary: "Apply an OperatingSystemConfig into an image root without an API server (--offline)",
  usage: [
    "apply --offline --root DIR [--arch amd64|arm64] FILE   (or --osc FILE)",
    "Writes the OSC's files and units under DIR, enables units offline ([Install] symlinks) and records",
    "last-applied-osc.yaml. secretRef files need an API server and are rejected; imageRef files are pulled",
    "from their registry.",
  ].join("\n"),
  flags: [
    { name: "offline", kind: "bool", default: "false", usage: "apply into --root without an API server or running systemd (required)" },
    {
      name: "osc",
      kind: "string",
      default: "",
      usage: "OperatingSystemConfig file (YAML or JSON), '-' for stdin; also the bare argument",
      positional: true,
    },
    { name: "arch", kind: "string", default: "", usage: "architecture of the image for imageRef files (default: this machine's)" },
  ],
  async run(ctx: CommandContext): Promise<number> {
    if (ctx.flags["offline"] !== "true") {
      throw new UsageError("apply needs --offline (a running node applies its OSC through the agent itself)");
    }
    const oscPath = ctx.flags["osc"] ?? "";
    if (oscPath === "") throw new UsageError("apply needs an OSC file: apply --offline --root DIR FILE");
    const bytes =
      oscPath === "-" ? new Uint8Array(await new Response(Bun.stdin.stream()).arrayBuffer()) : await readInputFile(oscPath, "OSC file");

    const { applyOffline } = await import("../controllers/operatingsystemconfig/offline.ts");
    const { machineArch } = await import("../registry/platform.ts");
    const { parseAgentEnv } = await import("./env.ts");
    const env = parseAgentEnv(ctx.env);
    const { createLogger, createStreamSink } = await import("../log/index.ts");
    const level = ctx.flags["log-level"] === "debug" || ctx.flags["log-level"] === "error" ? ctx.flags["log-level"] : "info";
    const format = ctx.flags["log-format"] === "json" ? "json" : "text";
    const log = createLogger({ level, sink: createStreamSink(ctx.stderr, format) });
    const report = await applyOffline(
      {
        root: ctx.root,
        osc: bytes,
        arch: ctx.flags["arch"] || machineArch(),
        processPath: env.processPath,
        plainHttpRegistries: env.plainHttpRegistries,
        log,
      },
      ctx.signal,
    );
    for (const a of report.actions) ctx.stdout.write(`${a.action} ${a.units.join(" ")}\n`.replace(/ \n$/, "\n"));
    ctx.stdout.write(`Applied OSC ${report.checksum} under ${ctx.root}\n`);
    return 0;
  },
};
