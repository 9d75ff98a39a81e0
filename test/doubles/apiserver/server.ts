/** startApiServer: wires store, PKI, TLS front, handler and test levers into one simulator instance. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { UserInfo } from "./user.ts";
import type { RequestRecord, Counters } from "./request-log.ts";
import type { KubeconfigAuth, KubeconfigOptions } from "./kubeconfig.ts";
import type { Obj } from "./store.ts";
import type { ResourceRef } from "./resources.ts";
import type { Clock } from "../../../src/clock/index.ts";
import { SimStore } from "./store.ts";
import { reservePort } from "../../harness/ports.ts";
import { Pki } from "./pki.ts";
import { TlsFront } from "./front.ts";
import { WatchHub } from "./watch.ts";
import { Faults } from "./faults.ts";
import { handle } from "./handler.ts";
import { startInnerServer } from "./inner-server.ts";
import type { InnerServer } from "./inner-server.ts";
import { bootstrapTokenSecret } from "./authn.ts";
import { countRequests } from "./request-log.ts";
import { renderKubeconfig } from "./kubeconfig.ts";
import { approveCsr, denyCsr, signCsr } from "./csr.ts";
import { waitForObject } from "./wait.ts";

export interface ApiServerOptions {
  /** HTTPS port (default 0 = pick a free one). */
  port?: number;
  /** Bind address (default 127.0.0.1). */
  hostname?: string;
  /** Extra SANs for the serving certificate (IPs or DNS names), e.g. "10.0.2.100". */
  extraSans?: string[];
  /** Number of store events kept for watch resumption (default 1000). */
  watchHistory?: number;
  /** Periodic BOOKMARK interval for watches that allow them (default 60 s; 0 = only after the replay). */
  bookmarkIntervalMs?: number;
  /** Watches end after a random time in [min, 2·min] seconds unless timeoutSeconds is given (default 1800). */
  minRequestTimeoutSec?: number;
  /** Where CA and certificates go (default: a new temp dir, removed by stop()). */
  stateDir?: string;
  /** Let requests without credentials in as system:anonymous (default false, as in Gardener shoots → 401). */
  anonymousAuth?: boolean;
  /** Fixed admin token (default: random). */
  adminToken?: string;
  /** Cap of the request log (oldest entries are dropped; default 100000). */
  requestLogLimit?: number;
  /** Time source for timestamps the server sets and bootstrap-token expiry (default: real time). */
  clock?: Pick<Clock, "now">;
}

const KUBE_VERSION = {
  major: "1",
  minor: "32",
  gitVersion: "v1.32.0",
  gitCommit: "70d3cc986aa8221cd1dfb1121852688902d3bf53",
  gitTreeState: "clean",
  buildDate: "2024-12-11T17:59:15Z",
  goVersion: "go1.23.3",
  compiler: "gc",
  platform: "linux/amd64",
};

const randomToken = (): string => Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64url");

export class ApiServerSim {
  readonly store: SimStore;
  readonly faults: Faults;
  readonly requests: RequestRecord[] = [];
  readonly adminToken: string;
  private readonly tokens = new Map<string, UserInfo>();
  private readonly machineNodes = new Map<string, string>();
  private readonly machineSecrets = new Map<string, Set<string>>();
  private readonly selfHostedMachines = new Set<string>();
  private readonly hub: WatchHub;
  private readonly front: TlsFront;
  private inner: InnerServer | undefined;

  private constructor(
    readonly pki: Pki,
    private readonly opts: ApiServerOptions,
    private readonly ownsStateDir: boolean,
  ) {
    const clock = opts.clock;
    this.store = new SimStore(opts.watchHistory ?? 1000, clock === undefined ? Date.now : () => clock.now());
    for (const ns of ["default", "kube-system", "kube-public", "kube-node-lease"])
      this.store.create("namespaces", { metadata: { name: ns } });
    this.adminToken = opts.adminToken ?? randomToken();
    // A token-file line always has a uid column (kube-apiserver refuses fewer than 3 columns).
    this.tokens.set(this.adminToken, { name: "admin", groups: ["system:masters"], uid: crypto.randomUUID() });
    this.hub = new WatchHub(this.store, opts.bookmarkIntervalMs ?? 60_000);
    this.front = new TlsFront({
      hostname: opts.hostname ?? "127.0.0.1",
      // Below the ephemeral range: while refuseConnections() has the port closed, an outgoing connection
      // (many, with test files running side by side) could otherwise take it before it is reopened.
      port: opts.port ?? reservePort(),
      certPem: pki.servingCertPem,
      keyPem: pki.servingKeyPem,
      caPem: pki.caPem,
      innerPort: () => this.inner?.port ?? 0,
    });
    this.faults = new Faults(this.hub, this.front);
  }

  static async start(opts: ApiServerOptions = {}): Promise<ApiServerSim> {
    const dir = opts.stateDir ?? (await mkdtemp(join(tmpdir(), "apiserver-sim-")));
    const pki = await Pki.create(dir, opts.extraSans ?? []);
    const sim = new ApiServerSim(pki, opts, opts.stateDir === undefined);
    await sim.listen();
    return sim;
  }

  private async listen(): Promise<void> {
    const limit = this.opts.requestLogLimit ?? 100_000;
    const deps = {
      authn: () => ({ tokens: this.tokens, store: this.store, anonymous: this.opts.anonymousAuth ?? false, nowMs: this.store.now() }),
      authz: {
        store: this.store,
        machineNodes: this.machineNodes,
        machineSecrets: this.machineSecrets,
        selfHostedMachines: this.selfHostedMachines,
      },
      faults: this.faults,
      hub: this.hub,
      identityOf: (p: number) => this.front.identityOf(p),
      record: (r: RequestRecord) => {
        this.requests.push(r);
        if (this.requests.length > limit) this.requests.splice(0, this.requests.length - limit);
      },
      minRequestTimeoutSec: this.opts.minRequestTimeoutSec ?? 1800,
      version: KUBE_VERSION,
    };
    this.inner = await startInnerServer((req, sourcePort) => handle(req, sourcePort, deps));
    await this.front.listen();
  }

  get port(): number {
    return this.front.port;
  }
  get url(): string {
    const h = this.opts.hostname ?? "127.0.0.1";
    return `https://${h.includes(":") ? `[${h}]` : h}:${this.front.port}`;
  }
  get caPem(): string {
    return this.pki.caPem;
  }
  get caFile(): string {
    return this.pki.caFile;
  }

  /**
   * A static token (token file line `token,user,uid,"groups"`). The uid column is mandatory in a token file:
   * absent here, the line gets a random one (as an operator writes some uid); "" is an empty column (no uid).
   */
  addToken(token: string, user: string, groups: string[] = [], uid: string = crypto.randomUUID()): void {
    this.tokens.set(token, uid === "" ? { name: user, groups } : { name: user, groups, uid });
  }

  /** Registers `<id>.<secret>` by creating Secret kube-system/bootstrap-token-<id>, as kube does. */
  addBootstrapToken(id: string, secret: string, opts: { expiration?: string; extraGroups?: string[] } = {}): string {
    this.store.create("secrets", bootstrapTokenSecret(id, secret, opts));
    return `${id}.${secret}`;
  }

  issueClientCert(cn: string, orgs: string[], expirationSeconds?: number): Promise<{ certPem: string; keyPem: string }> {
    return this.pki.issueClientCert(cn, orgs, expirationSeconds);
  }

  /** The node-agent authorizer's "own node" of a machine. */
  setMachineNode(machineName: string, nodeName: string): void {
    this.machineNodes.set(machineName, nodeName);
  }

  /**
   * Puts the node agent of `machineName` under the authorizer's gardenadm mode (self-hosted shoot):
   * its own Node is the one named `machineName`, and its Secret access follows §11.3's gardenadm rule.
   */
  markSelfHosted(machineName: string): void {
    this.selfHostedMachines.add(machineName);
    this.machineNodes.set(machineName, machineName);
  }

  /** Grants a node agent of `machineName` read access to Secret kube-system/`secretName`. */
  allowSecret(machineName: string, secretName: string): void {
    const s = this.machineSecrets.get(machineName) ?? new Set<string>();
    s.add(secretName);
    this.machineSecrets.set(machineName, s);
  }

  approveCsr(name: string, reason = "RequestApproved", message = "approved by test"): Obj {
    return approveCsr(this.store, name, reason, message);
  }
  denyCsr(name: string, reason = "RequestDenied", message = "denied by test"): Obj {
    return denyCsr(this.store, name, reason, message);
  }
  /** Issues the certificate of an approved CSR with the sim CA; resolves with the PEM. */
  signCsr(name: string): Promise<string> {
    return signCsr(this.store, this.pki, name);
  }

  /** Watch streams open now, of one resource (e.g. "leases") when given. */
  openWatches(resource?: string): number {
    if (resource === undefined) return this.hub.watchers.size;
    let n = 0;
    for (const w of this.hub.watchers) if (w.resource === resource) n++;
    return n;
  }

  counters(): Counters {
    return countRequests(this.requests);
  }

  compact(): void {
    this.store.compact();
  }

  kubeconfig(auth: KubeconfigAuth, opts?: KubeconfigOptions): string {
    return renderKubeconfig(this.url, this.caPem, auth, opts);
  }

  /** Resolves with the object once `predicate` holds for it (undefined = absent); rejects after `timeoutMs`. */
  waitFor(
    res: ResourceRef,
    namespace: string,
    name: string,
    predicate: (o: Obj | undefined) => boolean,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<Obj | undefined> {
    return waitForObject(this.store, res, namespace, name, predicate, timeoutMs, signal);
  }

  async stop(): Promise<void> {
    this.faults.stop();
    this.hub.stop();
    await this.front.close();
    await this.inner?.close();
    if (this.ownsStateDir) await rm(this.pki.dir, { recursive: true, force: true });
  }
}

export function startApiServer(opts?: ApiServerOptions): Promise<ApiServerSim> {
  return ApiServerSim.start(opts);
}
