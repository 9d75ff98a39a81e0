// `debugging` and `featureGates` of the config in the compiled agent (bootstrap-and-config.md §5.3,
// §7.1 step 3, §9): profiles are served on the health and metrics servers only when enableProfiling is set; the
// generic gates are accepted, an unknown gate stops start-up with an error naming it.
import { expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useSandbox } from "../harness/sandbox-hooks.ts";
import type { Sandbox } from "../harness/sandbox.ts";
import { eventually } from "../harness/eventually.ts";

const startSandbox = useSandbox();

const readyz = (sb: Sandbox): Promise<number> =>
  fetch(`http://127.0.0.1:${sb.healthPort}/readyz`).then(
    (r) => r.status,
    () => 0,
  );
const waitReady = (sb: Sandbox): Promise<number> =>
  eventually("/readyz to answer 200", () => readyz(sb), { until: (status) => status === 200, timeoutMs: 30_000, intervalMs: 50 });

test("enableProfiling serves heap and CPU profiles on the health port and on the metrics port", async () => {
  const sb = await startSandbox({
    nodeName: "prof-node",
    extraConfig: { debugging: { enableProfiling: true }, featureGates: { AllBeta: true } },
  });
  const agent = sb.spawnAgent();
  await waitReady(sb);
  const metrics = `http://127.0.0.1:${sb.metricsPort}`;

  const heap = await fetch(`${metrics}/debug/pprof/heap`);
  expect(heap.status).toBe(200);
  expect(((await heap.json()) as { snapshot: object }).snapshot).toBeDefined();
  const cpu = await fetch(`${metrics}/debug/pprof/profile?seconds=1`);
  expect(cpu.status).toBe(200);
  expect(((await cpu.json()) as { nodes: unknown[] }).nodes.length).toBeGreaterThan(0);
  expect((await fetch(`${metrics}/metrics`)).status).toBe(200);
  const onHealthPort = await fetch(`http://127.0.0.1:${sb.healthPort}/debug/pprof/heap`);
  expect(onHealthPort.status).toBe(200);
  expect(((await onHealthPort.json()) as { snapshot: object }).snapshot).toBeDefined();
  expect((await fetch(`http://127.0.0.1:${sb.healthPort}/readyz`)).status).toBe(200);
  expect(agent.output()).toContain("Serving profiles");
  expect(await agent.stop()).toBe(0);
}, 60_000);

test("without enableProfiling there are no profiles", async () => {
  const sb = await startSandbox({ nodeName: "noprof-node" });
  const agent = sb.spawnAgent();
  await waitReady(sb);
  expect((await fetch(`http://127.0.0.1:${sb.metricsPort}/debug/pprof/heap`)).status).toBe(404);
  expect((await fetch(`http://127.0.0.1:${sb.healthPort}/debug/pprof/heap`)).status).toBe(404);
  expect(await agent.stop()).toBe(0);
}, 60_000);

test("an unknown feature gate stops start-up with an error naming it", async () => {
  const sb = await startSandbox({ nodeName: "gate-node" });
  const dir = join(sb.root, "var/lib/gardener-node-agent");
  const file = readdirSync(dir).find((n) => n.startsWith("config-")) ?? "";
  const text = await Bun.file(join(dir, file)).text();
  writeFileSync(join(dir, file), `${text}featureGates:\n  NodeAgentMagic: true\n`);
  const agent = sb.spawnAgent();
  expect(await agent.proc.exited).toBe(1);
  await agent.stop();
  expect(agent.output()).toContain("unrecognized feature gate: NodeAgentMagic");
}, 60_000);
