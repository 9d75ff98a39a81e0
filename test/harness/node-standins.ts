import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { reservePort } from "./ports.ts";

/**
 * What a healthy worker offers the agent's health-check controller, so sandboxes behave like a real
 * node instead of restarting kubelet and containerd after a minute: kubelet's healthz and a `ctr` that
 * reaches its daemon. Each sandbox has its own healthz on a port of its own (the agent is pointed at it
 * through GARDENER_NODE_AGENT_KUBELET_HEALTHZ_URL): test files run side by side and stop their
 * stand-ins at different times, so none can share kubelet's fixed 127.0.0.1:10248.
 */
export interface NodeStandIns {
  /** Put first on the agent's PATH (holds `ctr`). */
  readonly binDir: string;
  /** The stand-in's healthz, for GARDENER_NODE_AGENT_KUBELET_HEALTHZ_URL. */
  readonly kubeletHealthUrl: string;
  stop(): Promise<void>;
}

export async function startNodeStandIns(): Promise<NodeStandIns> {
  const binDir = await mkdtemp(join(tmpdir(), "gna-node-bin-"));
  await writeFile(join(binDir, "ctr"), '#!/bin/sh\nprintf "Client:\\n  Version:  v1.7.24\\n\\nServer:\\n  Version:  v1.7.24\\n"\n');
  await chmod(join(binDir, "ctr"), 0o755);
  const kubelet = Bun.serve({ hostname: "127.0.0.1", port: reservePort(), fetch: () => new Response("ok") });
  return {
    binDir,
    kubeletHealthUrl: `http://127.0.0.1:${kubelet.port}/healthz`,
    async stop() {
      await kubelet.stop(true);
      await rm(binDir, { recursive: true, force: true });
    },
  };
}
