import { readInputFile } from "./input-file.ts";
import type { Command, CommandContext } from "./command.ts";

/**
 * `gardener-node-agent install --root DIR`: copies the running executable to <root>/opt/bin and installs
 * and enables gardener-node-agent.service offline (for image builds and the e2e rootfs).
 */
export const command: Command = {
  name: "install",
  summary: "Install this binary and gardener-node-agent.service into a root directory",
  usage: [
    "Writes <root>/opt/bin/gardener-node-agent (0755, a copy of this executable or of --binary),",
    "<root>/etc/systemd/system/gardener-node-agent.service (0644) and the multi-user.target.wants link.",
  ].join("\n"),
  flags: [
    {
      name: "binary",
      kind: "string",
      default: "",
      usage: "executable to install (default: the running executable)",
    },
  ],
  async run(ctx: CommandContext): Promise<number> {
    const [{ createHostFs }, { installAgent }] = await Promise.all([import("../host/index.ts"), import("../bootstrap/install.ts")]);
    const source = ctx.flags["binary"] || process.execPath;
    const binary = await readInputFile(source, "binary");
    const { resolve } = await import("node:path");
    const root = resolve(ctx.root);
    // An image build passes a fresh directory: create it through a HostFs rooted at "/".
    await createHostFs("/").ensureDir(root);
    await installAgent(createHostFs(root), binary);
    ctx.stdout.write(`Installed ${source} and gardener-node-agent.service under ${root}\n`);
    return 0;
  },
};
