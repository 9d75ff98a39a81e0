import type { Command } from "./command.ts";

/** A registered command; `load` imports its module only when it is about to run or print help. */
export interface CommandEntry {
  readonly name: string;
  readonly summary: string;
  load(): Promise<Command>;
}

/** The default command (no sub-command given). */
export const runEntry: CommandEntry = {
  name: "run",
  summary: "Run the node agent",
  load: async () => (await import("./run.ts")).command,
};

/** Sub-commands in the order `--help` lists them. */
export const subcommands: readonly CommandEntry[] = [
  {
    name: "bootstrap",
    summary: "Install and start gardener-node-agent.service on this node",
    load: async () => (await import("./bootstrap.ts")).command,
  },
  {
    name: "reset",
    summary: "Remove gardener-node-agent's artefacts from this node",
    load: async () => (await import("./reset.ts")).command,
  },
  {
    name: "render",
    summary: "Render a provision OperatingSystemConfig into a user-data script",
    load: async () => (await import("./render.ts")).command,
  },
  {
    name: "apply",
    summary: "Apply an OperatingSystemConfig into an image root without an API server (--offline)",
    load: async () => (await import("./apply.ts")).command,
  },
  {
    name: "diff",
    summary: "Show what the next apply would change on this node (dry run; exit 0 none, 1 changes, 2 error)",
    load: async () => (await import("./diff.ts")).command,
  },
  {
    name: "status",
    summary: "Show what is applied, what is pending and why, the managed units and the last failure",
    load: async () => (await import("./status.ts")).command,
  },
  {
    name: "support",
    summary: "Write a support bundle (tar.gz) for debugging this node; nothing secret leaves the node",
    load: async () => (await import("./support.ts")).command,
  },
  {
    name: "install",
    summary: "Install this binary and gardener-node-agent.service into a root directory",
    load: async () => (await import("./install.ts")).command,
  },
];
