import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeClock } from "../../test/doubles/fake-clock.ts";
import { createHostFs } from "../host/index.ts";
import type { HostFs } from "../host/index.ts";
import { ApiError } from "../kube/index.ts";
import type { Kube, KubeList, KubeObject, Resource, WatchEvent } from "../kube/index.ts";
import type { Logger } from "../log/index.ts";
import { parseCsrPem } from "./csr.ts";
import { CertificateRequestError, requestClientCertificate } from "./request-certificate.ts";

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

/** Cluster-scoped CSR store with just create/get; `failGet` makes the next GET fail. */
class CsrStore implements Kube {
  readonly objects = new Map<string, KubeObject>();
  creates = 0;
  gets = 0;
  failGet = false;
  #uid = 0;
  async get<T extends KubeObject>(_r: Resource, _ns: string, name: string): Promise<T> {
    this.gets++;
    if (this.failGet) throw new ApiError(500, "InternalError", "etcd unavailable");
    const o = this.objects.get(name);
    if (o === undefined) throw new ApiError(404, "NotFound", `certificatesigningrequests "${name}" not found`);
    return structuredClone(o) as T;
  }
  async create<T extends KubeObject>(_r: Resource, _ns: string, obj: T): Promise<T> {
    this.creates++;
    const name = obj.metadata.name ?? "";
    if (this.objects.has(name)) throw new ApiError(409, "AlreadyExists", `certificatesigningrequests "${name}" already exists`);
    const stored = { ...structuredClone(obj), metadata: { ...obj.metadata, uid: `uid-${++this.#uid}` } };
    this.objects.set(name, stored);
    return structuredClone(stored) as T;
  }
  setStatus(name: string, status: unknown) {
    const o = this.objects.get(name);
    if (o !== undefined) o["status"] = status;
  }
  only(): [string, KubeObject] {
    const [entry] = [...this.objects.entries()];
    if (entry === undefined || this.objects.size !== 1) throw new Error(`expected one CSR, have ${this.objects.size}`);
    return entry;
  }
  list<T extends KubeObject>(): Promise<KubeList<T>> {
    throw new Error("not used");
  }
  update<T extends KubeObject>(): Promise<T> {
    throw new Error("not used");
  }
  patch<T extends KubeObject>(): Promise<T> {
    throw new Error("not used");
  }
  delete(): Promise<void> {
    throw new Error("not used");
  }
  watch<T extends KubeObject>(): AsyncIterable<WatchEvent<T>> {
    throw new Error("not used");
  }
}

const approved = (cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n") => ({
  conditions: [{ type: "Approved", status: "True", reason: "AutoApproved", message: "approved by test" }],
  certificate: Buffer.from(cert).toString("base64"),
});

/**
 * Drives the fake clock: whenever the flow sleeps (one poll interval), call `onTick` and step 2 s,
 * until `work` settles. Waits for real I/O with a wall-clock deadline, never with a fixed sleep.
 */
async function driveUntilSettled<T>(clock: FakeClock, work: Promise<T>, onTick: (tick: number) => void): Promise<T> {
  let settled = false;
  const p = work.finally(() => {
    settled = true;
  });
  p.catch(() => {});
  const deadline = Date.now() + 4000;
  for (let tick = 0; !settled; tick++) {
    while (!settled && clock.pending() === 0) {
      if (Date.now() > deadline) throw new Error("flow neither slept nor finished");
      await new Promise<void>((r) => setImmediate(r));
    }
    if (settled) break;
    onTick(tick);
    clock.step(2000);
  }
  return p;
}

describe("requestClientCertificate", () => {
  let root: string;
  let host: HostFs;
  let kube: CsrStore;
  let clock: FakeClock;
  let ac: AbortController;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "gna-csr-flow-"));
    host = createHostFs(root);
    kube = new CsrStore();
    clock = new FakeClock();
    ac = new AbortController();
  });
  afterEach(async () => {
    ac.abort();
    await rm(root, { recursive: true, force: true });
  });

  test("creates the CSR with the agent's subject, signer, usages and expiry and returns the issued certificate", async () => {
    const deps = { kube, host, clock, log: silent };
    const issued = await driveUntilSettled(clock, requestClientCertificate(deps, "machine-a", ac.signal), (tick) => {
      if (tick === 3) kube.setStatus(kube.only()[0], approved());
    });
    const [name, csr] = kube.only();
    expect(name).toMatch(/^node-agent-csr-[A-Za-z0-9_-]{43}$/);
    expect(issued.csrName).toBe(name);
    expect(csr["spec"]).toMatchObject({
      signerName: "kubernetes.io/kube-apiserver-client",
      usages: ["digital signature", "key encipherment", "client auth"],
      expirationSeconds: 2592000,
    });
    const request = Buffer.from((csr["spec"] as { request: string }).request, "base64").toString("utf8");
    const text = Bun.spawnSync(["openssl", "req", "-noout", "-subject", "-nameopt", "RFC2253"], { stdin: Buffer.from(request) });
    expect(text.stdout.toString().trim()).toBe("subject=CN=gardener.cloud:node-agent:machine:machine-a,O=gardener.cloud:node-agents");
    expect(issued.certificatePem).toContain("BEGIN CERTIFICATE");
    expect(issued.keyPem).toContain("BEGIN EC PRIVATE KEY");
    expect(kube.gets).toBe(5); // GET at t=0 and after each of 4 poll intervals; approval came during the 4th
    // The pending key stays until the caller has written the kubeconfig.
    expect((await stat(join(root, "var/lib/gardener-node-agent/credentials/bootstrap-csr.key"))).mode & 0o777).toBe(0o600);
  });

  test("fails with the exact denial text and forgets the key so a retry uses a new CSR", async () => {
    const deps = { kube, host, clock, log: silent };
    const err = await driveUntilSettled(clock, requestClientCertificate(deps, "machine-a", ac.signal), (tick) => {
      if (tick === 1)
        kube.setStatus(kube.only()[0], { conditions: [{ type: "Denied", status: "True", reason: "Nope", message: "not this one" }] });
    }).catch((e: unknown) => e);
    const [name] = kube.only();
    expect(err).toBeInstanceOf(CertificateRequestError);
    expect((err as Error).message).toBe(`CertificateSigningRequest ${name} is denied, reason: Nope, message: not this one`);
    expect(await host.stat("/var/lib/gardener-node-agent/credentials/bootstrap-csr.key")).toBeUndefined();
  });

  test("fails with the exact text when the signer marks the CSR failed", async () => {
    const deps = { kube, host, clock, log: silent };
    const err = await driveUntilSettled(clock, requestClientCertificate(deps, "machine-a", ac.signal), () => {
      kube.setStatus(kube.only()[0], { conditions: [{ type: "Failed", status: "True", reason: "SignerError", message: "boom" }] });
    }).catch((e: unknown) => e);
    expect((err as Error).message).toBe(`CertificateSigningRequest ${kube.only()[0]} failed, reason: SignerError, message: boom`);
  });

  test("keeps waiting while approved without a certificate", async () => {
    const deps = { kube, host, clock, log: silent };
    await driveUntilSettled(clock, requestClientCertificate(deps, "machine-a", ac.signal), (tick) => {
      const name = kube.only()[0];
      kube.setStatus(name, tick < 5 ? { conditions: approved().conditions } : approved());
    });
    expect(kube.gets).toBe(7);
  });

  test("reuses the pending CSR after a restart instead of creating a second one", async () => {
    const first = new AbortController();
    const deps = { kube, host, clock, log: silent };
    const interrupted = requestClientCertificate(deps, "machine-a", first.signal).catch((e: unknown) => e);
    await clock.settle();
    first.abort(new Error("SIGTERM"));
    expect(await interrupted).toBeInstanceOf(Error);
    const [name] = kube.only();

    kube.setStatus(name, approved());
    const issued = await driveUntilSettled(clock, requestClientCertificate(deps, "machine-a", ac.signal), () => {});
    expect(issued.csrName).toBe(name);
    expect(kube.objects.size).toBe(1);
    expect(kube.creates).toBe(2); // the second create met AlreadyExists and the CSR was reused
    const spki = parseCsrPem(Buffer.from((kube.only()[1]["spec"] as { request: string }).request, "base64").toString()).publicKeyInfoDer;
    expect(spki.length).toBeGreaterThan(0);
  });

  test("refuses an existing CSR of the same name with another signer", async () => {
    const deps = { kube, host, clock, log: silent };
    const first = new AbortController();
    const interrupted = requestClientCertificate(deps, "machine-a", first.signal).catch((e: unknown) => e);
    await clock.settle();
    first.abort(new Error("stop"));
    await interrupted;
    const [, csr] = kube.only();
    (csr["spec"] as { signerName: string }).signerName = "example.com/other";
    const err = await requestClientCertificate(deps, "machine-a", ac.signal).catch((e: unknown) => e);
    expect((err as CertificateRequestError).kind).toBe("incompatible");
    expect(await host.stat("/var/lib/gardener-node-agent/credentials/bootstrap-csr.key")).toBeUndefined();
  });

  test("aborts the wait at once when a GET fails", async () => {
    const deps = { kube, host, clock, log: silent };
    const err = await driveUntilSettled(clock, requestClientCertificate(deps, "machine-a", ac.signal), (tick) => {
      if (tick === 1) kube.failGet = true;
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(kube.gets).toBe(3); // no retry after the failing third GET
  });

  test("gives up after 15 minutes without a certificate", async () => {
    const deps = { kube, host, clock, log: silent };
    const err = await driveUntilSettled(clock, requestClientCertificate(deps, "machine-a", ac.signal), () => {}).catch((e: unknown) => e);
    expect((err as CertificateRequestError).kind).toBe("timeout");
    expect(kube.gets).toBe(451); // one GET at t=0 and one every 2 s up to and including t=900 s
  });
});
