// gardener#15028: a unit that reads a token file is started only after the token file exists, even
// when the token controller's own sync is slow (here: every GET of the token Secret takes 1.5 s).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startSandbox, type Sandbox } from "../harness/sandbox.ts";

const tokenPath = "/var/lib/valitail/auth-token";
const tokenSecret = "gardener-valitail";
let sb: Sandbox | undefined;
/** Per unit: whether the token file existed when systemd was asked to restart it. */
const tokenAtRestart = new Map<string, boolean>();

beforeAll(async () => {
  sb = await startSandbox({
    extraConfig: {
      controllers: {
        operatingSystemConfig: { secretName: "gardener-node-agent-worker-pool", kubernetesVersion: "1.33.0" },
        token: { syncConfigs: [{ secretName: tokenSecret, path: tokenPath }] },
      },
    },
    systemd: {
      onAction: (a) => {
        if (a.action !== "Restart" || sb === undefined) return;
        for (const u of a.units) tokenAtRestart.set(u, existsSync(join(sb.root, tokenPath)));
      },
    },
  });
  sb.sim.allowSecret(`machine-${sb.nodeName}`, tokenSecret);
  sb.sim.store.create("secrets", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: tokenSecret, namespace: "kube-system" },
    data: { token: Buffer.from("valitail-token-1").toString("base64") },
  });
});
afterAll(async () => {
  await sb?.stop();
});

const osc = `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  units:
  - name: valitail.service
    content: "[Service]\\nExecStart=/opt/bin/valitail\\n"
    filePaths: [${tokenPath}]
  - name: token-reader.service
    content: "[Service]\\nExecStart=/opt/bin/reader --token-file=${tokenPath}\\n"
  - name: unrelated.service
    content: "[Service]\\nExecStart=/bin/true\\n"
`;

describe("token files before the units that read them (whole binary)", () => {
  test("should write the token file before restarting units naming it in filePaths or content", async () => {
    const s = sb!;
    s.sim.faults.setLatency(1_500, { verb: "get", path: `/secrets/${tokenSecret}` });
    const agent = s.spawnAgent();
    try {
      await s.waitForApplied(s.setOsc(osc), 30_000);
      expect(Object.fromEntries(tokenAtRestart)).toEqual({
        "valitail.service": true,
        "token-reader.service": true,
        "unrelated.service": expect.any(Boolean),
        "containerd.service": expect.any(Boolean),
      });
      expect(await s.readHostFile(tokenPath)).toBe("valitail-token-1");
      expect(agent.output()).toContain("Wrote token file before starting the units that read it");
    } finally {
      s.sim.faults.setLatency(0);
      await agent.stop();
    }
  }, 60_000);
});
