import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { CertificateRequestError, NoCredentialsError, selectRestConfig } from "../../src/credentials/index.ts";
import type { IdentityDeps } from "../../src/credentials/index.ts";
import { createHostFs } from "../../src/host/index.ts";
import type { HostFs } from "../../src/host/types.ts";
import { KubeClient, loadKubeconfig, nodes } from "../../src/kube/index.ts";
import type { RestConfig } from "../../src/kube/index.ts";
import type { Logger } from "../../src/log/types.ts";
import { startApiServer } from "../doubles/apiserver/index.ts";
import type { ApiServerSim, Obj } from "../doubles/apiserver/index.ts";
import { FakeClock } from "../doubles/fake-clock.ts";
import { eventually } from "../harness/eventually.ts";

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const machine = "shoot--foo--bar-worker-z1-abcde";

describe("client identity through the CSR flow against the API server simulator", () => {
  let sim: ApiServerSim;
  let root: string;
  let host: HostFs;
  let clock: FakeClock;
  let ac: AbortController;
  const clients: KubeClient[] = [];

  beforeAll(async () => {
    sim = await startApiServer();
  });
  afterAll(async () => {
    await sim.stop();
  });
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "gna-credentials-"));
    host = createHostFs(root);
    clock = new FakeClock();
    ac = new AbortController();
    for (const name of sim.store.list("certificatesigningrequests").map((o: Obj) => (o["metadata"] as { name: string }).name)) {
      sim.store.delete("certificatesigningrequests", "", name);
    }
  });
  afterEach(async () => {
    ac.abort();
    for (const c of clients.splice(0)) c.close();
    await rm(root, { recursive: true, force: true });
  });

  const deps = (): IdentityDeps => ({
    host,
    clock,
    log: silent,
    loadKubeconfig: (p) => loadKubeconfig(p, { resolvePath: (hp) => host.resolve(hp) }),
    createKube: (config: RestConfig) => {
      const c = new KubeClient({ config });
      clients.push(c);
      return c;
    },
  });

  async function provisionNode(tokenId: string): Promise<void> {
    const token = sim.addBootstrapToken(tokenId, "0123456789abcdef");
    await host.writeFileAtomic("/var/lib/gardener-node-agent/cluster-ca.crt", sim.caPem, 0o640);
    await host.writeFileAtomic("/var/lib/gardener-node-agent/credentials/bootstrap-token", `${token}\n`, 0o640);
    await host.writeFileAtomic("/var/lib/gardener-node-agent/machine-name", `${machine}\n`, 0o640);
  }

  /**
   * The single CSR in the simulator once the agent created it and waits (polls with a wall-clock deadline);
   * fails at once with the agent's error when `work` rejected first.
   */
  async function pendingCsr(work: Promise<unknown>): Promise<Obj> {
    let failure: unknown;
    let failed = false;
    const fail = (e: unknown) => {
      failure = e;
      failed = true;
    };
    // Callers may have turned rejection into an Error value already (`.catch((e) => e)`).
    work.then((v) => (v instanceof Error ? fail(v) : undefined), fail);
    const csrs = await eventually(
      "one CSR and an agent waiting on the clock",
      () => {
        if (failed) throw failure;
        return sim.store.list("certificatesigningrequests");
      },
      { until: (all) => all.length === 1 && clock.pending() > 0, timeoutMs: 4_000, intervalMs: 0 },
    );
    return csrs[0] as Obj;
  }
  const nameOf = (o: Obj): string => (o["metadata"] as { name: string }).name;

  test("a bootstrap token yields an approved client certificate and a kubeconfig that authenticates", async () => {
    await provisionNode("aaaaaa");
    const selecting = selectRestConfig(deps(), { server: sim.url }, ac.signal);
    const csr = await pendingCsr(selecting);
    const name = nameOf(csr);
    expect(name).toMatch(/^node-agent-csr-[A-Za-z0-9_-]{43}$/);
    expect(csr["spec"]).toMatchObject({
      signerName: "kubernetes.io/kube-apiserver-client",
      usages: ["digital signature", "key encipherment", "client auth"],
      expirationSeconds: 2592000,
      username: "system:bootstrap:aaaaaa",
    });
    const req = Buffer.from((csr["spec"] as { request: string }).request, "base64");
    const subject = Bun.spawnSync(["openssl", "req", "-noout", "-subject", "-nameopt", "RFC2253"], { stdin: req }).stdout.toString();
    expect(subject.trim()).toBe(`subject=CN=gardener.cloud:node-agent:machine:${machine},O=gardener.cloud:node-agents`);
    expect(Bun.spawnSync(["openssl", "req", "-verify", "-noout"], { stdin: req }).exitCode).toBe(0);

    sim.approveCsr(name);
    await sim.signCsr(name);
    clock.step(2000);
    const restConfig = await selecting;

    const kubeconfig = await host.readText("/var/lib/gardener-node-agent/credentials/kubeconfig");
    expect((await host.stat("/var/lib/gardener-node-agent/credentials/kubeconfig"))?.mode).toBe(0o600);
    expect(parse(kubeconfig ?? "")).toMatchObject({
      "current-context": "node-agent",
      clusters: [
        { name: "node-agent", cluster: { server: sim.url, "certificate-authority": "/var/lib/gardener-node-agent/cluster-ca.crt" } },
      ],
      contexts: [{ name: "node-agent", context: { cluster: "node-agent", user: "node-agent" } }],
      users: [{ name: "node-agent", user: { "client-certificate-data": expect.any(String), "client-key-data": expect.any(String) } }],
    });
    expect(await host.stat("/var/lib/gardener-node-agent/credentials/bootstrap-csr.key")).toBeUndefined();

    const client = new KubeClient({ config: restConfig });
    clients.push(client);
    await client.list(nodes, "");
    expect(sim.requests.at(-1)).toMatchObject({ user: `gardener.cloud:node-agent:machine:${machine}`, verb: "list", code: 200 });
  });

  test("an existing kubeconfig is used as is without a new CSR", async () => {
    await provisionNode("bbbbbb");
    // Short CN: the simulator issues with `openssl req`, which caps CN at 64 characters (Go does not).
    const { certPem, keyPem } = await sim.issueClientCert("gardener.cloud:node-agent:machine:m1", ["gardener.cloud:node-agents"]);
    const { writeAgentKubeconfig } = await import("../../src/credentials/index.ts");
    await writeAgentKubeconfig(host, {
      server: sim.url,
      caFile: "/var/lib/gardener-node-agent/cluster-ca.crt",
      certificatePem: certPem,
      keyPem,
    });
    const restConfig = await selectRestConfig(deps(), { server: sim.url }, ac.signal);
    expect(restConfig.clientCertPem).toBe(certPem);
    expect(sim.store.list("certificatesigningrequests")).toHaveLength(0);
  });

  test("a denied CSR fails with the denial reason", async () => {
    await provisionNode("cccccc");
    const selecting = selectRestConfig(deps(), { server: sim.url }, ac.signal).catch((e: unknown) => e);
    const name = nameOf(await pendingCsr(selecting));
    sim.denyCsr(name, "NotMine", "machine unknown");
    clock.step(2000);
    const err = await selecting;
    expect(err).toBeInstanceOf(CertificateRequestError);
    expect((err as Error).message).toBe(`CertificateSigningRequest ${name} is denied, reason: NotMine, message: machine unknown`);
    expect(await host.stat("/var/lib/gardener-node-agent/credentials/kubeconfig")).toBeUndefined();
  });

  test("a restart while waiting reuses the pending CSR", async () => {
    await provisionNode("dddddd");
    const first = new AbortController();
    const interrupted = selectRestConfig(deps(), { server: sim.url }, first.signal).catch((e: unknown) => e);
    const name = nameOf(await pendingCsr(interrupted));
    first.abort(new Error("SIGTERM"));
    expect(await interrupted).toBeInstanceOf(Error);

    const second = selectRestConfig(deps(), { server: sim.url }, ac.signal);
    await pendingCsr(second);
    expect(sim.store.list("certificatesigningrequests").map(nameOf)).toEqual([name]);
    sim.approveCsr(name);
    await sim.signCsr(name);
    clock.step(2000);
    await second;
    expect(await host.stat("/var/lib/gardener-node-agent/credentials/kubeconfig")).toBeDefined();
  });

  test("no kubeconfig and no bootstrap token is fatal with the upstream message", async () => {
    const err = await selectRestConfig(deps(), { server: sim.url }, ac.signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoCredentialsError);
    expect((err as Error).message).toBe(
      'unable to construct REST config (neither kubeconfig file "/var/lib/gardener-node-agent/credentials/token" nor bootstrap token file "/var/lib/gardener-node-agent/credentials/bootstrap-token" exist)',
    );
  });
});
