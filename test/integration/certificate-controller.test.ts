import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { parse as parseYaml } from "yaml";
import { CertificateRotationError, ClientCertificateError, setupCertificateController } from "../../src/controllers/certificate/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { RestConfig } from "../../src/kube/kubeconfig.ts";
import { loadKubeconfig } from "../../src/kube/kubeconfig.ts";
import { events } from "../../src/kube/resources.ts";
import type { Logger } from "../../src/log/types.ts";
import { X509Cert } from "../doubles/apiserver/index.ts";
import { FakeClock } from "../doubles/fake-clock.ts";
import { useControllerSandboxes } from "../harness/controller-sandbox.ts";
import { eventually } from "../harness/eventually.ts";

setDefaultTimeout(30_000);
type Plain = Record<string, any>;
const kubeconfigPath = "/var/lib/gardener-node-agent/credentials/kubeconfig";
const caPath = "/var/lib/gardener-node-agent/cluster-ca.crt";
const machinePrefix = "gardener.cloud:node-agent:machine:";

const env = useControllerSandboxes();
let seq = 0;

/**
 * Like `eventually`, but moves the agent's FakeClock to its next pending deadline on every look, so
 * CSR polls and backoffs run whenever they are due, however long the HTTPS round trips take.
 */
const drive = (clock: FakeClock, cond: () => boolean | Promise<boolean>, what: string): Promise<boolean> =>
  eventually(what, async () => {
    if (await cond()) return true;
    const next = clock.nextDeadline();
    if (next !== undefined) clock.set(Math.max(next, clock.now()));
    return false;
  });

/**
 * A certificate controller running as node agent `machine-<n>` with a client certificate of
 * `lifetimeSeconds` issued by the simulator (backdated 5 min like kube-controller-manager), time on a
 * FakeClock that starts at the real now (certificates carry real time), jitter pinned to `random`.
 */
async function agent(opts: { lifetimeSeconds: number; random: number; restConfig?: (base: RestConfig) => RestConfig }) {
  const { sim } = env;
  const machineName = `cert-machine-${++seq}`;
  const cert = await sim.issueClientCert(`${machinePrefix}${machineName}`, ["gardener.cloud:node-agents"], opts.lifetimeSeconds);
  const validity = new X509Cert(cert.certPem);
  const base: RestConfig = {
    server: sim.url,
    caPem: sim.caPem,
    caFile: caPath,
    clientCertPem: cert.certPem,
    clientKeyPem: cert.keyPem,
    credentials: { kind: "none" },
  };
  const restConfig = opts.restConfig ? opts.restConfig(base) : base;
  const sb = await env.start({ prefix: "certificate-controller", createNode: false, clock: new FakeClock(Date.now()), restConfig });
  const { root, host, clock, kube } = sb;
  await host.writeFileAtomic(caPath, sim.caPem, 0o644);
  const logs: Array<{ msg: string; fields: unknown }> = [];
  const log: Logger = {
    debug() {},
    info() {},
    warn() {},
    error: (msg, fields) => logs.push({ msg, fields }),
    child: () => log,
  };
  const restarts: string[] = [];
  const controller = setupCertificateController({
    kube,
    restConfig,
    host,
    clock,
    log,
    machineName,
    onRestartRequested: (why) => restarts.push(why),
    random: () => opts.random,
  });
  let finished = false;
  sb.startController({
    start: (signal) =>
      controller.start(signal).then(() => {
        finished = true;
      }),
  });
  const csrs = () =>
    (sim.store.list("certificatesigningrequests", {}) as Plain[]).filter((c) => {
      const request = Buffer.from(c["spec"]["request"], "base64").toString();
      return c["spec"]["username"] === `${machinePrefix}${machineName}` && request.includes("CERTIFICATE REQUEST");
    });
  return { machineName, validity, host, clock, controller, restarts, logs, csrs, finished: () => finished, root };
}

const lifetimeOf = (v: X509Cert) => v.notAfterMs - v.notBeforeMs;

describe("certificate controller", () => {
  test("looks again exactly at the renewal deadline while it has not passed, without a CSR", async () => {
    const a = await agent({ lifetimeSeconds: 3600, random: 0 });
    await a.clock.waitForSleepers(1);
    const deadline = a.validity.notBeforeMs + Math.floor(0.8 * lifetimeOf(a.validity));
    expect(a.clock.nextDeadline()).toBe(deadline);

    a.clock.set(deadline - 1);
    await a.clock.settle();
    expect(a.csrs()).toEqual([]);
    expect(a.restarts).toEqual([]);
    expect(await a.host.stat(kubeconfigPath)).toBeUndefined();
  });

  test("schedules a 720 h certificate beyond the 2^31 ms timer limit without firing early", async () => {
    const a = await agent({ lifetimeSeconds: 2_592_000, random: 0.999 });
    await a.clock.waitForSleepers(1);
    const delay = (a.clock.nextDeadline() ?? 0) - a.clock.now();
    expect(delay).toBeGreaterThan(2 ** 31);
    const base = 0.8 * lifetimeOf(a.validity);
    expect(a.clock.nextDeadline()).toBe(a.validity.notBeforeMs + Math.floor(base + 0.999 * 0.1 * base));
    a.clock.step(2 ** 31);
    await a.clock.settle();
    expect(a.csrs()).toEqual([]);
  });

  test("renews past 88 % with a CSR of its own user, rewrites the kubeconfig keeping the CA path, then asks for a restart", async () => {
    const a = await agent({ lifetimeSeconds: 3600, random: 1 });
    await a.clock.waitForSleepers(1);
    a.clock.set(a.validity.notBeforeMs + Math.ceil(0.88 * lifetimeOf(a.validity)) + 1);

    await eventually("the renewal CSR", () => a.csrs().length === 1);
    const csr = a.csrs()[0] as Plain;
    expect(csr["metadata"]["name"]).toStartWith("node-agent-csr-");
    expect(csr["spec"]["username"]).toBe(`${machinePrefix}${a.machineName}`);
    expect(csr["spec"]["groups"]).toContain("gardener.cloud:node-agents");
    expect(csr["spec"]["signerName"]).toBe("kubernetes.io/kube-apiserver-client");
    expect(csr["spec"]["expirationSeconds"]).toBe(2592000);
    expect(a.restarts).toEqual([]);

    env.sim.approveCsr(csr["metadata"]["name"]);
    const newCertPem = await env.sim.signCsr(csr["metadata"]["name"]);
    // The CSR is polled every 2 s on the agent's clock.
    await drive(a.clock, () => a.restarts.length === 1, "the restart request");
    expect(a.restarts).toEqual(["client certificate renewed"]);
    await eventually("the controller to stop", () => a.finished());

    expect((await a.host.stat(kubeconfigPath))?.mode).toBe(0o600);
    const doc = parseYaml((await a.host.readText(kubeconfigPath)) ?? "") as Plain;
    expect(doc["current-context"]).toBe("node-agent");
    expect(doc["clusters"]).toEqual([{ name: "node-agent", cluster: { server: env.sim.url, "certificate-authority": caPath } }]);
    const user = doc["users"][0]["user"];
    expect(Buffer.from(user["client-certificate-data"], "base64").toString()).toBe(newCertPem);
    expect(new X509Cert(newCertPem).subject).toContain(`CN=${machinePrefix}${a.machineName}`);

    // The written kubeconfig is usable: it authenticates as the same node agent with the new certificate.
    const next = await loadKubeconfig(kubeconfigPath, { resolvePath: (p) => a.host.resolve(p) });
    const kube = new KubeClient({ config: next });
    try {
      await kube.create(events, "default", {
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: `cert-check-${a.machineName}`, namespace: "default" },
        involvedObject: { kind: "Node", apiVersion: "v1", name: a.machineName },
        reason: "Check",
        message: "new certificate works",
        type: "Normal",
      });
    } finally {
      kube.close();
    }
    expect(env.sim.requests.some((r) => r.resource === "events" && r.user === `${machinePrefix}${a.machineName}` && r.code === 201)).toBe(
      true,
    );
    // The pending CSR key is gone once the kubeconfig is written.
    expect(await a.host.stat("/var/lib/gardener-node-agent/credentials/bootstrap-csr.key")).toBeUndefined();
  });

  test("keeps retrying without a restart while the REST config carries no client certificate", async () => {
    const a = await agent({
      lifetimeSeconds: 3600,
      random: 0,
      restConfig: (b) => ({ server: b.server, caPem: env.sim.caPem, credentials: { kind: "token", token: env.sim.adminToken } }),
    });
    await eventually("a reconciler error", () => a.logs.length > 0);
    expect((a.logs[0]!.fields as { err: unknown }).err).toBeInstanceOf(ClientCertificateError);
    expect(a.restarts).toEqual([]);
    expect(a.finished()).toBe(false);
  });

  test("refuses a client certificate whose key does not belong to it", async () => {
    const other = await env.sim.issueClientCert("someone-else", []);
    const a = await agent({ lifetimeSeconds: 3600, random: 0, restConfig: (b) => ({ ...b, clientKeyPem: other.keyPem }) });
    await eventually("a reconciler error", () => a.logs.length > 0);
    const err = (a.logs[0]!.fields as { err: Error }).err;
    expect(err).toBeInstanceOf(ClientCertificateError);
    expect(err.message).toBe("failed to parse X509 certificate: private key does not match public key");
  });

  test("retries a denied renewal with a fresh CSR and does not restart", async () => {
    const a = await agent({ lifetimeSeconds: 3600, random: 0.5 });
    await a.clock.waitForSleepers(1);
    a.clock.set(a.validity.notBeforeMs + Math.ceil(0.84 * lifetimeOf(a.validity)) + 1);
    await eventually("the renewal CSR", () => a.csrs().length === 1);
    const first = (a.csrs()[0] as Plain)["metadata"]["name"] as string;
    env.sim.denyCsr(first);
    await drive(a.clock, () => a.logs.length > 0, "the failed rotation");
    const err = (a.logs[0]!.fields as { err: Error }).err;
    expect(err).toBeInstanceOf(CertificateRotationError);
    expect(err.message).toBe(
      `error rotating certificate: CertificateSigningRequest ${first} is denied, reason: RequestDenied, message: denied by test`,
    );
    expect(a.restarts).toEqual([]);

    // Backoff on the agent's clock, then a new key and therefore a new CSR name.
    await drive(a.clock, () => a.csrs().length === 2, "the second CSR");
    expect(a.csrs().map((c) => c["metadata"]["name"])).toContain(first);
    expect(await a.host.stat(kubeconfigPath)).toBeUndefined();
  });
});
