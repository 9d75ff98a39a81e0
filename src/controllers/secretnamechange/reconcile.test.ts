import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { createHostFs } from "../../host/index.ts";
import { ApiError, RestartRequested } from "../../kube/index.ts";
import type { KubeObject, Reader } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { EventRecorder } from "../events.ts";
import { ConfigRewriteError, createReconciler } from "./reconcile.ts";

const log: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
const key = { namespace: "", name: "node-a" };
const configPath = "/var/lib/gardener-node-agent/config-v1.110.0.yaml";
const config = `apiVersion: nodeagent.config.gardener.cloud/v1alpha1
kind: NodeAgentConfiguration
controllers:
  operatingSystemConfig:
    secretName: gardener-node-agent-pool-old
    kubernetesVersion: v1.33.2
  token:
    syncPeriod: 12h
apiServer: {server: https://api.example, caFile: /var/lib/gardener-node-agent/cluster-ca.crt}
`;

const withLabel = (value?: string): KubeObject => ({
  metadata: { name: "node-a", labels: value === undefined ? {} : { "worker.gardener.cloud/gardener-node-agent-secret-name": value } },
});
const reader = (node: KubeObject | undefined): Reader => ({
  get: async <T extends KubeObject>() => {
    if (node === undefined) throw new ApiError(404, "NotFound", 'nodes "node-a" not found');
    return node as T;
  },
  list: () => Promise.reject(new Error("unused")),
});

let root = "";
let recorded: string[] = [];
const events: EventRecorder = { event: async (_o, type, reason, _a, note) => void recorded.push(`${type} ${reason} ${note}`) };
const signal = new AbortController().signal;
const file = () => join(root, configPath);
const reconcilerFor = (node: KubeObject | undefined) =>
  createReconciler({ nodes: reader(node), host: createHostFs(root), configPath, events, log });

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "gna-snc-"));
  await mkdir(join(root, "var/lib/gardener-node-agent"), { recursive: true });
  await writeFile(file(), config, { mode: 0o644 });
  recorded = [];
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("secret-name-change reconcile", () => {
  test("should rewrite the whole config with the new secret name, sorted and 0600, then ask for a restart (scenario 46)", async () => {
    const err = await reconcilerFor(withLabel("new"))(key, signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RestartRequested);
    const text = await readFile(file(), "utf8");
    const doc = parse(text) as Record<string, Record<string, Record<string, unknown>>>;
    expect(doc["controllers"]?.["operatingSystemConfig"]).toEqual({ kubernetesVersion: "1.33.2", secretName: "new", syncPeriod: "10m0s" });
    expect(doc["controllers"]?.["token"]?.["syncPeriod"]).toBe("12h0m0s");
    expect(Object.keys(doc)).toEqual([...Object.keys(doc)].sort());
    expect(text.startsWith("apiServer:\n")).toBe(true);
    expect((await stat(file())).mode & 0o777).toBe(0o600);
    expect(recorded).toEqual([]);
  });

  test("should keep a JSON config in JSON", async () => {
    await writeFile(file(), JSON.stringify(parse(config)));
    await reconcilerFor(withLabel("new"))(key, signal).catch(() => undefined);
    const doc = JSON.parse(await readFile(file(), "utf8")) as { controllers: { operatingSystemConfig: { secretName: string } } };
    expect(doc.controllers.operatingSystemConfig.secretName).toBe("new");
  });

  test("should do nothing when the label names the configured secret", async () => {
    expect(await reconcilerFor(withLabel("gardener-node-agent-pool-old"))(key, signal)).toEqual({});
    expect(await readFile(file(), "utf8")).toBe(config);
  });

  test.each([
    ["removed", undefined],
    ["empty", ""],
  ] as const)("should do nothing when the label is %s", async (_what, value) => {
    expect(await reconcilerFor(withLabel(value))(key, signal)).toEqual({});
    expect(await readFile(file(), "utf8")).toBe(config);
  });

  test("should stop when the Node is gone", async () => {
    expect(await reconcilerFor(undefined)(key, signal)).toEqual({});
  });

  test("should record a Warning event and fail without a restart when the file cannot be written", async () => {
    const host = createHostFs(root);
    const full = { readText: (p: string) => host.readText(p), writeFileAtomic: () => Promise.reject(new Error("no space left on device")) };
    const r = createReconciler({ nodes: reader(withLabel("new")), host: full, configPath, events, log });
    const err = await r(key, signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigRewriteError);
    const message = `failed rewriting config file ${configPath} with secret name new: no space left on device`;
    expect((err as Error).message).toBe(message);
    expect(recorded).toEqual([`Warning SecretNameChangeFailed ${message}`]);
    expect(await readFile(file(), "utf8")).toBe(config);
  });

  test("should record a Warning event and fail without a restart when the file does not decode", async () => {
    await writeFile(file(), "kind: Invalid\n");
    const err = await reconcilerFor(withLabel("new"))(key, signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigRewriteError);
    expect((err as Error).message).toStartWith(`failed rewriting config file ${configPath} with secret name new: `);
    expect(recorded).toEqual([`Warning SecretNameChangeFailed ${(err as Error).message}`]);
    expect(await readFile(file(), "utf8")).toBe("kind: Invalid\n");
  });
});
