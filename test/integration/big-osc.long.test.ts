// A big OSC (issue 27): 5,000 base64 files, ~20 MB of osc.yaml, applied by the compiled agent and then
// replaced by one in which every file changed. Its memory is measured in bench/big-osc.bench.ts; this
// checks the outcome: every file with its content and mode, the units restarted, last-applied written, and
// a big osc.yaml that is not an OSC rejected with the last good version kept.
import { afterEach, expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { bigOscContent, bigOscPath, bigOscYaml } from "../harness/big-osc.ts";
import { eventually } from "../harness/eventually.ts";
import { startSandbox, type Sandbox } from "../harness/sandbox.ts";

const FILES = 5_000;
const UNITS = 10;

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.stop();
  sandbox = undefined;
});

/** Every file's content as generation `generation` has it; the first difference, if any. */
async function firstWrongFile(sb: Sandbox, generation: number): Promise<string | undefined> {
  for (let f = 0; f < FILES; f++) {
    const text = await sb.readHostFile(bigOscPath(f)).catch(() => undefined);
    if (text !== bigOscContent(f, generation)) return bigOscPath(f);
  }
  return undefined;
}

test("the compiled agent applies a 20 MB OSC of 5,000 files and every change of it", async () => {
  const sb = await startSandbox({ nodeName: "big-osc" });
  sandbox = sb;
  const agent = sb.spawnAgent();
  const restarts = () => sb.systemd.actions.filter((a) => a.action === "Restart" && a.units.some((u) => u.startsWith("big-osc-"))).length;

  const first = bigOscYaml(FILES, 0);
  expect(first.length).toBeGreaterThan(20_000_000);
  await sb.waitForApplied(sb.setOsc(first), 240_000);
  const files = await sb.listFiles("/etc/big-osc");
  expect(files).toHaveLength(FILES);
  expect(new Set(files.map((f) => f.mode))).toEqual(new Set(["0644"]));
  expect(await firstWrongFile(sb, 0)).toBeUndefined();
  expect(restarts()).toBe(UNITS);

  const second = bigOscYaml(FILES, 1);
  await sb.waitForApplied(sb.setOsc(second), 240_000);
  expect(await firstWrongFile(sb, 1)).toBeUndefined();
  expect(restarts()).toBe(2 * UNITS);
  // last-applied names the second OSC's content (the agent writes it only after a complete apply).
  const lastApplied = await readFile(join(sb.root, "var/lib/gardener-node-agent/last-applied-osc.yaml"), "utf8");
  expect(lastApplied).toContain(Buffer.from(bigOscContent(FILES - 1, 1)).toString("base64"));
  expect(lastApplied).not.toContain(Buffer.from(bigOscContent(FILES - 1, 0)).toString("base64"));

  // A big osc.yaml that is not an OSC (its watch event decoded as it streams in; the API server accepts
  // only base64 in a Secret's data): rejected naming the Secret, not the data; the host keeps the last good version.
  const notOsc = Buffer.from(bigOscYaml(FILES, 2).replace("kind: OperatingSystemConfig", "kind: Pod")).toString("base64");
  sb.sim.store.update("secrets", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: sb.secretName, namespace: "kube-system", annotations: { "checksum/data-script": "not-an-osc" } },
    data: { "osc.yaml": notOsc },
  });
  const condition = () =>
    ((sb.node()?.["status"] as { conditions?: Record<string, string>[] } | undefined)?.conditions ?? []).find(
      (c) => c["type"] === "OperatingSystemConfigApplied",
    );
  const rejected = await eventually("the rejected Secret's condition", () => condition(), {
    until: (c) => c?.["reason"] === "ApplyFailed",
    timeoutMs: 120_000,
  });
  expect(rejected?.["message"]).toContain(`failed decoding osc.yaml of secret kube-system/${sb.secretName}`);
  expect(rejected?.["message"]).not.toContain("big-osc");
  expect(await firstWrongFile(sb, 1)).toBeUndefined();
  await agent.stop();
  // The one error logged is the rejection's.
  const errors = agent
    .output()
    .split("\n")
    .filter((l) => l.includes("\tERROR\t"));
  expect(errors).toHaveLength(1);
  expect(errors[0]).toContain("failed decoding osc.yaml of secret");
}, 600_000);
