// Approval before and after a disruptive apply, and blocking pods (issue 26), of the compiled agent
// against the API-server simulator and the systemd double: the hooks' requested → approved → done, a
// stale approval and a denial; a matching pod that starts running and one that goes away, watched with
// the node's field selector only while the annotation is set.
import { describe, expect, test } from "bun:test";
import { sampleOsc } from "../demo/sample-osc.ts";
import { eventually } from "../harness/eventually.ts";
import { useSandbox } from "../harness/sandbox-hooks.ts";
import { agentBinary, agentEnv, type Sandbox } from "../harness/sandbox.ts";

type Plain = Record<string, unknown>;

const startSandbox = useSandbox();

interface Condition {
  readonly status: string;
  readonly reason: string;
  readonly message: string;
}

const conditionOf = (sb: Sandbox): Condition | undefined =>
  ((sb.node()?.["status"] as { conditions?: (Condition & { type: string })[] } | undefined)?.conditions ?? []).find(
    (c) => c.type === "OperatingSystemConfigApplied",
  );
const annotations = (sb: Sandbox): Record<string, string> =>
  ((sb.node()?.["metadata"] as Plain)["annotations"] as Record<string, string> | undefined) ?? {};
const annotate = (sb: Sandbox, values: Record<string, string | null>) =>
  sb.sim.store.patch("nodes", "", sb.nodeName, "merge", { metadata: { annotations: values } });
const events = (sb: Sandbox, reason: string): Plain[] =>
  (sb.sim.store.list("events", { namespace: "default" }) as Plain[]).filter((e) => e["reason"] === reason);
const greeting = async (sb: Sandbox) => (await sb.readHostFile("/etc/demo/greeting.txt")).trim();

const waitForMessage = (sb: Sandbox, reason: string, part: string): Promise<Condition> =>
  eventually(
    `condition ${reason} saying "${part}"`,
    () => {
      const c = conditionOf(sb);
      return c?.reason === reason && c.message.includes(part) ? c : undefined;
    },
    { timeoutMs: 30_000 },
  );

async function metric(sb: Sandbox, series: string): Promise<number | undefined> {
  const body = await (await fetch(`http://127.0.0.1:${sb.metricsPort}/metrics`)).text();
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** `gardener-node-agent status` on the node, while the agent runs. */
async function statusOf(sb: Sandbox): Promise<string> {
  const flags = ["--config-dir=/var/lib/gardener-node-agent", `--root=${sb.root}`];
  const p = Bun.spawn([agentBinary, "status", ...flags], {
    env: agentEnv(sb.systemd.address, sb.nodeName),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  expect(code).toBe(0);
  return stdout;
}

/** A sandbox whose agent has applied the first greeting. */
async function applied(nodeName: string): Promise<{ sb: Sandbox; first: string }> {
  const sb = await startSandbox({ nodeName });
  sb.spawnAgent();
  const first = sb.setOsc(sampleOsc({ greeting: "before" }));
  await sb.waitForApplied(first);
  return { sb, first };
}

const hook = (name: string) => `hooks.node-agent.gardener.cloud/${name}`;

describe("disruption hooks", () => {
  test("asks every hook, ignores a stale approval, holds on a denial, applies once all approved, then says done", async () => {
    const { sb, first } = await applied("hooks-node");
    annotate(sb, { "node-agent.gardener.cloud/disruption-hooks": "db, backup" });
    const second = sb.setOsc(sampleOsc({ greeting: "after" }));
    const c = second.slice(0, 12);

    const waiting = await waitForMessage(sb, "WaitingForDisruptionApproval", "from hooks db, backup");
    expect(waiting.status).toBe("False");
    expect(waiting.message).toBe(
      `Waiting for approval of the disruptive apply of operating system config ${c} (restarts greeter.service) from hooks db, backup: each answers on its annotation hooks.node-agent.gardener.cloud/<name> with "approved ${c}"`,
    );
    expect(annotations(sb)[hook("db")]).toBe(`requested ${c}`);
    expect(annotations(sb)[hook("backup")]).toBe(`requested ${c}`);
    expect(await greeting(sb)).toBe("before");
    expect(await metric(sb, 'gardener_node_agent_osc_waiting{reason="WaitingForDisruptionApproval"}')).toBe(1);

    // The node controller still acts on the restart annotation while the apply waits.
    sb.systemd.clearActions();
    annotate(sb, { "worker.gardener.cloud/restart-systemd-services": "kubelet.service" });
    await eventually("kubelet restart", () => sb.systemd.actions.find((a) => a.action === "Restart" && a.units[0] === "kubelet.service"), {
      timeoutMs: 30_000,
    });

    // An approval of the version before does not count: the hook is asked again.
    annotate(sb, { [hook("db")]: `approved ${first.slice(0, 12)}` });
    await eventually("db asked again", () => (annotations(sb)[hook("db")] === `requested ${c}` ? true : undefined), { timeoutMs: 30_000 });
    expect(conditionOf(sb)?.message).toContain("from hooks db, backup");

    annotate(sb, { [hook("db")]: `approved ${c}` });
    await waitForMessage(sb, "WaitingForDisruptionApproval", "from hook backup:");
    annotate(sb, { [hook("backup")]: `denied ${c}: nightly backup runs until 03:00` });
    const denied = await waitForMessage(sb, "WaitingForDisruptionApproval", "denied");
    expect(denied.message).toBe(
      `Disruptive apply of operating system config ${c} (restarts greeter.service) denied: hook backup denied it: nightly backup runs until 03:00`,
    );
    expect(await greeting(sb)).toBe("before");
    expect(sb.systemd.actions.filter((a) => a.units.includes("greeter.service"))).toEqual([]);
    const status = await statusOf(sb);
    expect(status).toMatch(/Condition     False\/WaitingForDisruptionApproval since /);
    expect(status).toContain(": Disruptive apply of operating system config");
    expect(status).toContain("hook backup denied it: nightly backup runs until 03:00");

    annotate(sb, { [hook("backup")]: `approved ${c}` });
    await sb.waitForApplied(second);
    expect(await greeting(sb)).toBe("after");
    await eventually("done for both", () => (annotations(sb)[hook("backup")] === `done ${c}` ? true : undefined), { timeoutMs: 30_000 });
    expect(annotations(sb)[hook("db")]).toBe(`done ${c}`);
    expect(events(sb, "WaitingForDisruptionApproval")).toHaveLength(1);
    expect(await metric(sb, 'gardener_node_agent_osc_waiting{reason="WaitingForDisruptionApproval"}')).toBe(0);
  }, 90_000);

  test("a change that restarts nothing applies without asking", async () => {
    const { sb } = await applied("hooks-quiet");
    annotate(sb, { "node-agent.gardener.cloud/disruption-hooks": "db" });
    const doc = sampleOsc({ greeting: "before" }).replace(
      "  files:\n",
      "  files:\n  - path: /etc/demo/unused.txt\n    permissions: 420\n    content:\n      inline:\n        data: quiet\n",
    );
    const quiet = sb.setOsc(doc);
    await sb.waitForApplied(quiet);
    expect(await sb.readHostFile("/etc/demo/unused.txt")).toBe("quiet");
    expect(annotations(sb)[hook("db")]).toBeUndefined();
  }, 60_000);
});

function createPod(sb: Sandbox, name: string, nodeName: string, labels: Record<string, string>): void {
  sb.sim.store.create("pods", {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "data", labels },
    spec: { nodeName, containers: [{ name: "c", image: "db" }] },
  });
}
const setPhase = (sb: Sandbox, name: string, phase: string) =>
  sb.sim.store.patch("pods", "data", name, "merge", { status: { phase } }, { subresource: "status" });

describe("blocking pods", () => {
  test("waits while a matching pod runs on the node, watched by node name, and applies when it stops", async () => {
    const { sb } = await applied("pods-node");
    sb.sim.store.create("namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "data" } });
    createPod(sb, "db-0", sb.nodeName, { app: "db" });
    createPod(sb, "db-1", "other-node", { app: "db" });
    createPod(sb, "web-0", sb.nodeName, { app: "web" });
    setPhase(sb, "db-1", "Running");
    setPhase(sb, "web-0", "Running");
    const watchesBefore = sb.sim.openWatches();
    const requestsBefore = sb.sim.requests.length;
    annotate(sb, { "node-agent.gardener.cloud/blocking-pods": "app=db" });
    await eventually("the pod watch", () => (sb.sim.openWatches() === watchesBefore + 1 ? true : undefined), { timeoutMs: 30_000 });

    // db-0 starts running after the watch listed the pods: the watch sees it.
    setPhase(sb, "db-0", "Running");
    const second = sb.setOsc(sampleOsc({ greeting: "after" }));
    const waiting = await waitForMessage(sb, "WaitingForBlockingPods", "data/db-0");
    expect(waiting.message).toBe(
      `Disruptive apply of operating system config ${second.slice(0, 12)} (restarts greeter.service) waits while a running pod on this node matches node-agent.gardener.cloud/blocking-pods (app=db): data/db-0`,
    );
    expect(await greeting(sb)).toBe("before");
    expect(await metric(sb, 'gardener_node_agent_osc_waiting{reason="WaitingForBlockingPods"}')).toBe(1);
    await eventually("the WaitingForBlockingPods event", () => events(sb, "WaitingForBlockingPods")[0], { timeoutMs: 30_000 });
    // One node at a time from now on: a node waiting for its pods does not take the pool's serial lock.
    sb.sim.store.patch("nodes", "", sb.nodeName, "merge", {
      metadata: { labels: { "worker.gardener.cloud/gardener-node-agent-secret-name": sb.secretName } },
    });
    sb.sim.store.patch("secrets", "kube-system", sb.secretName, "merge", {
      metadata: { annotations: { "reconciliation.osc.node-agent.gardener.cloud/serial": "true" } },
    });
    // A second matching pod starts: the watch wakes the agent, which looks again (now serial) and still waits.
    createPod(sb, "db-9", sb.nodeName, { app: "db" });
    setPhase(sb, "db-9", "Running");
    await waitForMessage(
      sb,
      "WaitingForBlockingPods",
      "2 running pods on this node match node-agent.gardener.cloud/blocking-pods (app=db): data/db-0, data/db-9",
    );
    expect(sb.sim.store.get("leases", "kube-system", sb.secretName)).toBeUndefined();

    // It goes: the watch (no poll) wakes the apply at once.
    sb.sim.store.delete("pods", "data", "db-9", { gracePeriodSeconds: 0 });
    await waitForMessage(sb, "WaitingForBlockingPods", "a running pod on this node matches");
    const goneAt = Date.now();
    setPhase(sb, "db-0", "Succeeded");
    await sb.waitForApplied(second, 10_000);
    expect(Date.now() - goneAt).toBeLessThan(10_000);
    expect(await greeting(sb)).toBe("after");
    expect(events(sb, "WaitingForBlockingPods")).toHaveLength(1);
    // Once free to go, the node took the serial lock for its apply and gave it back.
    await eventually(
      "the serial lock released",
      () =>
        JSON.stringify((sb.sim.store.get("leases", "kube-system", sb.secretName) as Plain | undefined)?.["spec"]) === "{}"
          ? true
          : undefined,
      { timeoutMs: 10_000 },
    );

    // Every pod request named this node; none listed the cluster.
    const podRequests = sb.sim.requests.slice(requestsBefore).filter((r) => r.resource === "pods");
    expect(podRequests.length).toBeGreaterThan(0);
    for (const r of podRequests)
      expect(decodeURIComponent(r.path)).toContain(`fieldSelector=spec.nodeName=${sb.nodeName},status.phase=Running`);
    expect(podRequests.some((r) => r.watch)).toBe(true);

    // The serial Lease watch started meanwhile went once the lock was given back (issue 25: a done node
    // needs none of the Lease's events); without the annotation the pod watch goes too.
    await eventually("the serial Lease watch stopped", () => (sb.sim.openWatches("leases") === 0 ? true : undefined), {
      timeoutMs: 10_000,
    });
    const open = sb.sim.openWatches("pods");
    annotate(sb, { "node-agent.gardener.cloud/blocking-pods": null });
    await eventually("the pod watch stopped", () => (sb.sim.openWatches("pods") === open - 1 ? true : undefined), { timeoutMs: 30_000 });
  }, 90_000);

  test("more than five blocking pods: five named, the rest counted; an invalid selector warns and blocks nothing", async () => {
    const { sb } = await applied("pods-many");
    sb.sim.store.create("namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "data" } });
    for (let i = 0; i < 7; i++) {
      createPod(sb, `db-${i}`, sb.nodeName, { app: "db" });
      setPhase(sb, `db-${i}`, "Running");
    }
    annotate(sb, { "node-agent.gardener.cloud/blocking-pods": "app in (db, cache)" });
    const second = sb.setOsc(sampleOsc({ greeting: "after" }));
    const waiting = await waitForMessage(sb, "WaitingForBlockingPods", "7 running pods");
    expect(waiting.message).toEndWith(": data/db-0, data/db-1, data/db-2, data/db-3, data/db-4 and 2 more");

    annotate(sb, { "node-agent.gardener.cloud/blocking-pods": "app in (db" });
    await sb.waitForApplied(second);
    const warning = await eventually("the warning", () => events(sb, "InvalidBlockingPodsSelector")[0], { timeoutMs: 30_000 });
    expect(warning["type"]).toBe("Warning");
    expect(warning["message"]).toBe(
      "Node annotation node-agent.gardener.cloud/blocking-pods is not a valid label selector (parentheses do not match); it is ignored",
    );
  }, 90_000);
});
