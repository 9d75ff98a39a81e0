import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * What a healthy worker offers the agent's health-check controller, so sandboxes behave like a real
 * node instead of restarting kubelet and containerd after a minute: kubelet's healthz on
 * 127.0.0.1:10248 and a `ctr` that reaches its daemon.
 */
export interface NodeStandIns {
  /** Put first on the agent's PATH (holds `ctr`). */
  readonly binDir: string;
  stop(): Promise<void>;
}

export async function startNodeStandIns(): Promise<NodeStandIns> {
  const binDir = await mkdtemp(join(tmpdir(), "gna-node-bin-"));
  await writeFile(join(binDir, "ctr"), '#!/bin/sh\nprintf "Client:\\n  Version:  v1.7.24\\n\\nServer:\\n  Version:  v1.7.24\\n"\n');
  await chmod(join(binDir, "ctr"), 0o755);
  let kubelet: ReturnType<typeof Bun.serve> | undefined;
  try {
    kubelet = Bun.serve({ hostname: "127.0.0.1", port: 10248, fetch: () => new Response("ok") });
  } catch {
    // Another sandbox of this run already answers on 10248; one healthz serves them all.
    kubelet = undefined;
  }
  return {
    binDir,
    async stop() {
      await kubelet?.stop(true);
      await rm(binDir, { recursive: true, force: true });
    },
  };
}
