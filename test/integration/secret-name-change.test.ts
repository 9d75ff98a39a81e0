// The secret-name-change controller in the compiled agent (bootstrap-and-config.md §7.5, scenario 46):
// the Node's label names another OSC Secret → the config file is rewritten (0600, sorted keys) → the
// agent exits 0 → the restarted agent (systemd's job, the test's here) applies the new Secret.
import { expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { useSandbox } from "../harness/sandbox-hooks.ts";
import type { Sandbox } from "../harness/sandbox.ts";
import { eventually } from "../harness/eventually.ts";

const label = "worker.gardener.cloud/gardener-node-agent-secret-name";
const oscWith = (marker: string) => `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  files:
  - path: /etc/marker
    permissions: 420
    content: {inline: {data: "${marker}\\n"}}
`;

const startSandbox = useSandbox();

const configFile = (sb: Sandbox): string => {
  const dir = join(sb.root, "var/lib/gardener-node-agent");
  const name = readdirSync(dir).find((n) => /^config-.+\.yaml$/.test(n));
  if (name === undefined) throw new Error("no config file in the sandbox");
  return join(dir, name);
};

const secretFor = (name: string, oscYaml: string) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: {
    name,
    namespace: "kube-system",
    annotations: { "checksum/data-script": new Bun.CryptoHasher("sha256").update(oscYaml).digest("hex") },
    labels: { "gardener.cloud/role": "operating-system-config" },
  },
  data: { "osc.yaml": Buffer.from(oscYaml).toString("base64") },
});

const metricLines = (sb: Sandbox): Promise<string[]> =>
  fetch(`http://127.0.0.1:${sb.metricsPort}/metrics`)
    .then(
      (r) => r.text(),
      () => "",
    )
    .then((body) => body.split("\n"));
const pollMetric = (sb: Sandbox, line: string): Promise<string[]> =>
  eventually(`metric line ${line}`, () => metricLines(sb), { until: (lines) => lines.includes(line), timeoutMs: 20_000, intervalMs: 50 });

const labelNode = (sb: Sandbox, value: string) =>
  sb.sim.store.patch("nodes", "", sb.nodeName, "merge", { metadata: { labels: { [label]: value } } });

test("a changed secret-name label rewrites the config, exits 0, and the restarted agent applies the new Secret", async () => {
  const sb = await startSandbox({ nodeName: "snc-node", machineName: "snc-machine", secretName: "gardener-node-agent-pool-old" });
  const oldChecksum = sb.setOsc(oscWith("old"));
  const newOsc = oscWith("new");
  const newSecret = secretFor("gardener-node-agent-pool-new", newOsc);
  sb.sim.store.create("secrets", newSecret);
  sb.sim.allowSecret("snc-machine", "gardener-node-agent-pool-new");

  const first = sb.spawnAgent();
  await sb.waitForApplied(oldChecksum);
  expect(await sb.readHostFile("/etc/marker")).toBe("old\n");

  // A label equal to the config changes nothing: reconciled once, the agent keeps running.
  const before = await Bun.file(configFile(sb)).text();
  labelNode(sb, "gardener-node-agent-pool-old");
  await pollMetric(sb, 'controller_runtime_reconcile_total{controller="secret-name-change",result="success"} 1');
  expect(first.proc.exitCode).toBeNull();
  expect(await Bun.file(configFile(sb)).text()).toBe(before);
  labelNode(sb, "gardener-node-agent-pool-new");
  expect(await first.proc.exited).toBe(0);
  expect(first.output()).not.toContain("level=error");

  const path = configFile(sb);
  const text = await Bun.file(path).text();
  expect(text).not.toBe(before);
  expect(statSync(path).mode & 0o777).toBe(0o600);
  const doc = parse(text) as { controllers: { operatingSystemConfig: { secretName: string } } };
  expect(doc.controllers.operatingSystemConfig.secretName).toBe("gardener-node-agent-pool-new");
  const topKeys = Object.keys(doc);
  expect(topKeys).toEqual([...topKeys].sort());

  // systemd's Restart=always, played by the test: the new process follows the new Secret.
  const second = sb.spawnAgent();
  await sb.waitForApplied(newSecret.metadata.annotations["checksum/data-script"]);
  expect(await sb.readHostFile("/etc/marker")).toBe("new\n");
  expect(await second.stop()).toBe(0);
}, 90_000);
