// What an operator sees on the Node object and in Prometheus, from the compiled agent against the
// API-server simulator and the systemd double: the OperatingSystemConfigApplied condition for each of
// its reasons, the apply history annotation and its bound, the hold annotation and its release, and
// a missing OSC Secret that appears later.
import { describe, expect, test } from "bun:test";
import { sampleOsc } from "../demo/sample-osc.ts";
import { useSandbox } from "../harness/sandbox-hooks.ts";
import type { Sandbox } from "../harness/sandbox.ts";
import { eventually } from "../harness/eventually.ts";

type Plain = Record<string, unknown>;

const startSandbox = useSandbox();

interface Condition {
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
}

const conditionOf = (sb: Sandbox): Condition | undefined =>
  ((sb.node()?.["status"] as { conditions?: Condition[] } | undefined)?.conditions ?? []).find(
    (c) => (c as unknown as Plain)["type"] === "OperatingSystemConfigApplied",
  );

const waitForReason = (sb: Sandbox, reason: string, timeoutMs = 30_000): Promise<Condition> =>
  eventually(
    `condition reason ${reason}`,
    () => {
      const c = conditionOf(sb);
      return c?.reason === reason ? c : undefined;
    },
    { timeoutMs: timeoutMs },
  );

const annotations = (sb: Sandbox): Record<string, string> =>
  ((sb.node()?.["metadata"] as Plain)["annotations"] as Record<string, string> | undefined) ?? {};
const history = (sb: Sandbox): Plain[] => JSON.parse(annotations(sb)["node-agent.gardener.cloud/apply-history"] ?? "[]") as Plain[];
const events = (sb: Sandbox, reason: string): Plain[] =>
  (sb.sim.store.list("events", { namespace: "default" }) as Plain[]).filter((e) => e["reason"] === reason);
const annotate = (sb: Sandbox, values: Record<string, string | null>) =>
  sb.sim.store.patch("nodes", "", sb.nodeName, "merge", { metadata: { annotations: values } });

async function metric(sb: Sandbox, series: string): Promise<number | undefined> {
  const body = await (await fetch(`http://127.0.0.1:${sb.metricsPort}/metrics`)).text();
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("Node condition OperatingSystemConfigApplied", () => {
  test("says Applying while an apply runs, then Applied with the checksum, with history and metrics", async () => {
    const sb = await startSandbox({ nodeName: "cond-node" });
    // greeter.service's restart takes a while: long enough to see the apply in progress.
    sb.systemd.delayJobs("greeter.service", 1500);
    const checksum = sb.setOsc(sampleOsc({ greeting: "one" }));
    const agent = sb.spawnAgent();
    const applying = await waitForReason(sb, "Applying");
    expect(applying.status).toBe("Unknown");
    expect(applying.message).toBe(`Applying operating system config ${checksum.slice(0, 12)}`);

    await sb.waitForApplied(checksum);
    const applied = await waitForReason(sb, "Applied");
    expect(applied.status).toBe("True");
    expect(applied.message).toBe(`Operating system config ${checksum.slice(0, 12)} is applied`);
    const h = history(sb);
    expect(h).toHaveLength(1);
    expect(h[0]).toMatchObject({ checksum: checksum.slice(0, 12), filesChanged: 3, filesDeleted: 0, outcome: "Applied" });
    expect(h[0]?.["unitsRestarted"]).toEqual(["kubelet.service", "greeter.service", "containerd.service"]);
    expect(Number(h[0]?.["durationMs"])).toBeGreaterThanOrEqual(1500);

    expect(await metric(sb, "gardener_node_agent_osc_up_to_date")).toBe(1);
    expect(await metric(sb, "gardener_node_agent_osc_held")).toBe(0);
    expect(await metric(sb, 'gardener_node_agent_osc_apply_duration_seconds_count{outcome="applied"}')).toBe(1);
    expect(await metric(sb, "gardener_node_agent_osc_applied_timestamp_seconds")).toBeGreaterThan(Date.now() / 1000 - 60);
    await agent.stop();
  }, 60_000);

  test("says ApplyFailed naming the step and unit, keeps the transition time while failing, then recovers", async () => {
    const sb = await startSandbox({ nodeName: "fail-node" });
    sb.systemd.failJobs("greeter.service", { operation: "restart" });
    const checksum = sb.setOsc(sampleOsc({ greeting: "broken" }));
    const agent = sb.spawnAgent();
    const failed = await waitForReason(sb, "ApplyFailed");
    expect(failed.status).toBe("False");
    expect(failed.message).toStartWith(`Applying operating system config ${checksum.slice(0, 12)} failed: failed executing unit commands:`);
    expect(failed.message).toContain("greeter.service");
    const entry = await eventually("a failed history entry", () => history(sb).find((e) => e["outcome"] === "Failed"), {
      timeoutMs: 30_000,
    });
    expect(entry["checksum"]).toBe(checksum.slice(0, 12));
    // The retry fails again: status unchanged, so the transition time stays.
    await eventually("a second failed apply", () => (history(sb).filter((e) => e["outcome"] === "Failed").length >= 2 ? true : undefined), {
      timeoutMs: 30_000,
    });
    expect(conditionOf(sb)?.lastTransitionTime).toBe(failed.lastTransitionTime);
    expect(await metric(sb, "gardener_node_agent_osc_up_to_date")).toBe(0);

    sb.systemd.clearInjections();
    await sb.waitForApplied(checksum, 60_000);
    expect((await waitForReason(sb, "Applied")).status).toBe("True");
    await agent.stop();
  }, 90_000);

  test("keeps the apply history to the last five applies within 2 KB", async () => {
    const sb = await startSandbox({ nodeName: "history-node" });
    const agent = sb.spawnAgent();
    const checksums: string[] = [];
    for (let i = 1; i <= 7; i++) {
      checksums.push(sb.setOsc(sampleOsc({ greeting: `version ${i}` })));
      await sb.waitForApplied(checksums.at(-1) ?? "");
    }
    const text = annotations(sb)["node-agent.gardener.cloud/apply-history"] ?? "";
    expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(2048);
    expect(history(sb).map((e) => e["checksum"])).toEqual(checksums.slice(2).map((c) => c.slice(0, 12)));
    await agent.stop();
  }, 90_000);
});

describe("hold annotation", () => {
  test("holds a new version with the reason and what is pending, keeps other controllers working, and applies at once on release", async () => {
    const sb = await startSandbox({ nodeName: "held-node" });
    const agent = sb.spawnAgent();
    const first = sb.setOsc(sampleOsc({ greeting: "before" }));
    await sb.waitForApplied(first);
    annotate(sb, { "node-agent.gardener.cloud/hold": "waiting for the kernel fix" });
    const second = sb.setOsc(sampleOsc({ greeting: "after" }));

    const held = await waitForReason(sb, "Held");
    expect(held.status).toBe("False");
    expect(held.message).toBe(
      `Held by node-agent.gardener.cloud/hold (waiting for the kernel fix); pending operating system config ${second.slice(0, 12)}: 1 file to write, restarts greeter.service`,
    );
    expect((await sb.readHostFile("/etc/demo/greeting.txt")).trim()).toBe("before");
    expect(
      await eventually("held metric", async () => ((await metric(sb, "gardener_node_agent_osc_held")) === 1 ? 1 : undefined), {
        timeoutMs: 30_000,
      }),
    ).toBe(1);
    await eventually("the Held event", () => (events(sb, "Held").length > 0 ? true : undefined), { timeoutMs: 30_000 });

    // The node controller still acts on the restart annotation while the OSC is held.
    sb.systemd.clearActions();
    annotate(sb, { "worker.gardener.cloud/restart-systemd-services": "kubelet.service" });
    await eventually("kubelet restart", () => sb.systemd.actions.find((a) => a.action === "Restart" && a.units[0] === "kubelet.service"), {
      timeoutMs: 30_000,
    });
    // Still one event for this held version after the Node changed (each change wakes the controller).
    expect(events(sb, "Held")).toHaveLength(1);
    expect(annotations(sb)["checksum/cloud-config-data"]).toBe(first);

    const releasedAt = Date.now();
    annotate(sb, { "node-agent.gardener.cloud/hold": null });
    await sb.waitForApplied(second, 10_000);
    // "At once": not after the reconciliation delay or the 10-minute sync.
    expect(Date.now() - releasedAt).toBeLessThan(10_000);
    expect((await sb.readHostFile("/etc/demo/greeting.txt")).trim()).toBe("after");
    expect((await waitForReason(sb, "Applied")).status).toBe("True");
    expect(await metric(sb, "gardener_node_agent_osc_held")).toBe(0);
    await agent.stop();
  }, 60_000);
});

describe("missing OSC Secret", () => {
  test("warns once, says SecretMissing without a crash loop, and applies the Secret once it is created", async () => {
    const sb = await startSandbox({ nodeName: "nosecret-node" });
    const agent = sb.spawnAgent();
    const missing = await waitForReason(sb, "SecretMissing");
    expect(missing.status).toBe("False");
    expect(missing.message).toContain(`kube-system/${sb.secretName}`);
    await eventually("the OSCSecretMissing event", () => (events(sb, "OSCSecretMissing").length > 0 ? true : undefined), {
      timeoutMs: 30_000,
    });
    expect(events(sb, "OSCSecretMissing")[0]?.["type"]).toBe("Warning");
    await eventually(
      "a retry log line",
      () => ((agent.output().match(/Operating system config secret not found/g) ?? []).length >= 2 ? true : undefined),
      { timeoutMs: 20_000 },
    );
    expect(agent.proc.exitCode).toBeNull();

    const checksum = sb.setOsc(sampleOsc({ greeting: "late" }));
    await sb.waitForApplied(checksum, 10_000);
    expect((await waitForReason(sb, "Applied")).status).toBe("True");

    // Deleted later: reported at once (the Secret's delete event), still without a crash.
    sb.sim.store.delete("secrets", "kube-system", sb.secretName);
    await waitForReason(sb, "SecretMissing", 10_000);
    expect(events(sb, "OSCSecretMissing")).toHaveLength(2);
    expect(agent.proc.exitCode).toBeNull();
    await agent.stop();
  }, 60_000);
});
