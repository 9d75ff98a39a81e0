import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { createTokenResync, setupTokenController } from "../../src/controllers/token/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { nodes } from "../../src/kube/resources.ts";
import { quietLog as log, useControllerSandboxes, waitForIdleQueue } from "../harness/controller-sandbox.ts";
import { eventually } from "../harness/eventually.ts";

setDefaultTimeout(30_000);
type Plain = Record<string, any>;
const b64 = (s: string) => Buffer.from(s).toString("base64");

const env = useControllerSandboxes();

/** A token controller for two sync configs of fresh Secrets, files under a temp --root, time on a FakeClock. */
async function agent() {
  const sb = await env.start({ prefix: "token", hostIsNodeName: true });
  const { sim, id, nodeName, root, host, clock, kube, events } = sb;
  const secretA = `token-a-${id}`;
  const secretB = `token-b-${id}`;
  const pathA = "/var/lib/valitail/auth-token";
  const pathB = "/var/lib/gardener-node-agent/credentials/token";
  const resync = createTokenResync();
  const controller = setupTokenController({
    kube,
    host,
    events,
    node: sb.node,
    clock,
    log,
    syncConfigs: [
      { secretName: secretA, path: pathA },
      { secretName: secretB, path: pathB },
    ],
    syncPeriodMs: 3_600_000,
    resync,
  });
  const setSecret = (name: string, data: Record<string, string> | undefined) => {
    const body = { apiVersion: "v1", kind: "Secret", metadata: { namespace: "kube-system", name }, ...(data ? { data } : {}) };
    if (sim.store.get("secrets", "kube-system", name) === undefined) sim.store.create("secrets", body);
    else sim.store.update("secrets", body);
  };
  const gets = (name: string) => sim.requests.filter((r) => r.resource === "secrets" && r.verb === "get" && r.name === name);
  const warnings = () =>
    (sim.store.list("events", { namespace: "default" }) as Plain[])
      .filter((e) => e["involvedObject"]?.name === nodeName && e["type"] === "Warning")
      .map((e) => `${e["reason"]}: ${e["message"]}`);
  /** Lets the controller finish what is due now (queue empty, nothing in flight). */
  const idle = async () => {
    await clock.settle();
    await waitForIdleQueue(controller.queue);
  };
  return {
    root,
    host,
    clock,
    controller,
    resync,
    secretA,
    secretB,
    pathA,
    pathB,
    setSecret,
    gets,
    warnings,
    idle,
    start: () => sb.startController(controller),
    text: (p: string) => host.readText(p),
    mode: async (p: string) => (await host.stat(p))?.mode,
  };
}

describe("token controller", () => {
  test.each([
    ["022", 0o022],
    ["077", 0o077],
  ])("writes each token with mode 0640 under umask %s, creating parent directories", async (_label, umask) => {
    const previous = process.umask(umask);
    try {
      const a = await agent();
      a.setSecret(a.secretA, { token: b64("token-one") });
      a.setSecret(a.secretB, { token: b64("token-two") });
      a.start();
      await eventually("both files", async () => (await a.text(a.pathA)) === "token-one" && (await a.text(a.pathB)) === "token-two");
      expect(await a.mode(a.pathA)).toBe(0o640);
      expect(await a.mode(a.pathB)).toBe(0o640);
      expect((await a.host.stat("/var/lib/valitail"))?.kind).toBe("dir");
    } finally {
      process.umask(previous);
    }
  });

  test("reads the Secrets live, leaves an unchanged file alone and picks up a new value after syncPeriod", async () => {
    const a = await agent();
    a.setSecret(a.secretA, { token: b64("v1") });
    a.setSecret(a.secretB, { token: b64("other") });
    a.start();
    await eventually("the first token", async () => (await a.text(a.pathA)) === "v1");
    await a.idle();
    const before = await Bun.file(a.host.resolve(a.pathA)).stat();
    expect(env.sim.requests.some((r) => r.resource === "secrets" && r.verb !== "get" && r.name === a.secretA)).toBe(false);

    a.clock.step(3_600_000);
    await a.idle();
    expect(a.gets(a.secretA)).toHaveLength(2);
    const same = await Bun.file(a.host.resolve(a.pathA)).stat();
    expect([same.ino, same.mtimeMs]).toEqual([before.ino, before.mtimeMs]);

    a.setSecret(a.secretA, { token: b64("v2") });
    a.clock.step(3_600_000);
    await eventually("the rotated token", async () => (await a.text(a.pathA)) === "v2");
    expect(await a.mode(a.pathA)).toBe(0o640);
  });

  test("restores a deleted file when the resync channel names its Secret", async () => {
    const a = await agent();
    a.setSecret(a.secretA, { token: b64("keep-me") });
    a.setSecret(a.secretB, { token: b64("other") });
    a.start();
    await eventually("the token file", async () => (await a.text(a.pathA)) === "keep-me");
    await a.idle();
    await a.host.remove(a.pathA);
    a.resync.trigger({ namespace: "kube-system", name: a.secretA });
    await eventually("the restored file", async () => (await a.text(a.pathA)) === "keep-me");
  });

  test("keeps retrying with backoff while the Secret is missing and writes the file once it appears", async () => {
    const a = await agent();
    a.setSecret(a.secretB, { token: b64("other") });
    a.start();
    await eventually("a 404 for the missing secret", () => a.gets(a.secretA).some((r) => r.code === 404));
    await a.idle();
    expect(a.controller.stats().reconcileErrors).toBeGreaterThanOrEqual(1);
    expect(await a.text(a.pathA)).toBeUndefined();
    a.clock.step(1_000); // a few more backoff rounds
    await a.idle();

    a.setSecret(a.secretA, { token: b64("late") });
    await eventually("the file of the late secret", async () => {
      a.clock.step(1_000);
      await a.clock.settle();
      return (await a.text(a.pathA)) === "late";
    });
    expect(await a.mode(a.pathA)).toBe(0o640);
  });

  test("leaves the file untouched and records one Warning event when the token is empty", async () => {
    const a = await agent();
    await a.host.writeFileAtomic(a.pathA, "old-token", 0o640);
    a.setSecret(a.secretA, { token: "" });
    a.setSecret(a.secretB, { token: b64("other") });
    a.start();
    await eventually("the warning event", () => a.warnings().length === 1);
    expect(a.warnings()).toEqual([
      `TokenSyncFailed: secret key "token" does not exist or is empty in secret kube-system/${a.secretA}, not updating ${a.pathA}`,
    ]);
    for (let i = 0; i < 5; i++) {
      a.clock.step(1_000); // backoff retries: still failing, no further events
      await a.idle();
    }
    expect(a.gets(a.secretA).length).toBeGreaterThan(2);
    expect(a.warnings()).toHaveLength(1);
    expect(await a.text(a.pathA)).toBe("old-token");

    a.setSecret(a.secretA, { token: b64("fixed") });
    await eventually("the fixed token", async () => {
      a.clock.step(1_000);
      await a.clock.settle();
      return (await a.text(a.pathA)) === "fixed";
    });
  });

  test("a client on the synced token file uses the rotated token with its next request", async () => {
    const a = await agent();
    env.sim.addToken(`sa-token-one-${a.secretA}`, "sa-one", ["system:masters"]);
    env.sim.addToken(`sa-token-two-${a.secretA}`, "sa-two", ["system:masters"]);
    a.setSecret(a.secretA, { token: b64("unused") });
    a.setSecret(a.secretB, { token: b64(`sa-token-one-${a.secretA}`) });
    a.start();
    await eventually("the first token file", async () => (await a.text(a.pathB)) === `sa-token-one-${a.secretA}`);

    const client = new KubeClient({
      config: { server: env.sim.url, caPem: env.sim.caPem, credentials: { kind: "tokenFile", path: a.host.resolve(a.pathB) } },
    });
    env.afterTest(() => client.close());
    const userOfNextRequest = async () => {
      const n = env.sim.requests.length;
      await client.list(nodes, "", { fieldSelector: "metadata.name=none" });
      return env.sim.requests.slice(n).find((r) => r.resource === "nodes" && r.path.includes("metadata.name%3Dnone"))?.user;
    };
    expect(await userOfNextRequest()).toBe("sa-one");

    a.setSecret(a.secretB, { token: b64(`sa-token-two-${a.secretA}`) });
    a.resync.trigger({ namespace: "kube-system", name: a.secretB });
    await eventually("the rotated token file", async () => (await a.text(a.pathB)) === `sa-token-two-${a.secretA}`);
    expect(await userOfNextRequest()).toBe("sa-two");
  });
});
