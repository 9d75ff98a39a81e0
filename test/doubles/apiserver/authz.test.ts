import { describe, expect, test } from "bun:test";
import { authorize, type AuthzConfig, type RequestAttributes } from "./authz.ts";
import { SimStore } from "./store.ts";

const user = { name: "gardener.cloud:node-agent:machine:cp-0", groups: ["gardener.cloud:node-agents", "system:authenticated"] };
const secretRequest = (verb: string, name: string, labelSelector = ""): RequestAttributes => ({
  user,
  verb,
  isResourceRequest: true,
  path: "",
  apiGroup: "",
  resource: "secrets",
  subresource: "",
  namespace: "kube-system",
  name,
  fieldSelector: [],
  labelSelector,
});

const oscSecret = (name: string, labels: Record<string, string>, osc = "spec: {}\n") => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace: "kube-system", labels },
  data: { "osc.yaml": Buffer.from(osc).toString("base64") },
});

describe("node-agent authorizer in gardenadm mode", () => {
  const world = () => {
    const store = new SimStore(100, Date.now);
    const cfg: AuthzConfig = {
      store,
      machineNodes: new Map([["cp-0", "cp-0"]]),
      machineSecrets: new Map(),
      selfHostedMachines: new Set(["cp-0"]),
    };
    store.create("namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "kube-system" } });
    store.create(
      "secrets",
      oscSecret(
        "osc-cp",
        { "worker.gardener.cloud/pool": "cp" },
        "spec:\n  files:\n  - path: /x\n    content:\n      secretRef:\n        name: cp-ref\n        dataKey: k\n",
      ),
    );
    store.create("secrets", oscSecret("osc-workers", { "worker.gardener.cloud/pool": "workers" }));
    store.create("secrets", oscSecret("unlabelled", {}));
    return { store, cfg };
  };

  test("should grant every pool's OSC Secret and its secretRefs before the Node exists", () => {
    const { cfg } = world();
    expect(authorize(secretRequest("get", "osc-cp"), cfg).allowed).toBe(true);
    expect(authorize(secretRequest("get", "osc-workers"), cfg).allowed).toBe(true);
    expect(authorize(secretRequest("get", "cp-ref"), cfg).allowed).toBe(true);
    expect(authorize(secretRequest("list", "", "worker.gardener.cloud/pool"), cfg).allowed).toBe(true);
    expect(authorize(secretRequest("get", "unlabelled"), cfg).allowed).toBe(false);
    expect(authorize(secretRequest("list", ""), cfg).allowed).toBe(false);
  });

  test("should grant only the Secret named by the Node's label once the Node exists", () => {
    const { store, cfg } = world();
    store.create("nodes", {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: "cp-0", labels: { "worker.gardener.cloud/gardener-node-agent-secret-name": "osc-cp" } },
    });
    expect(authorize(secretRequest("get", "osc-cp"), cfg).allowed).toBe(true);
    expect(authorize(secretRequest("get", "cp-ref"), cfg).allowed).toBe(true);
    expect(authorize(secretRequest("get", "osc-workers"), cfg).allowed).toBe(false);
    expect(authorize(secretRequest("list", "", "worker.gardener.cloud/pool"), cfg).allowed).toBe(false);
    expect(authorize(secretRequest("get", "shoot-access-cluster-admin"), cfg).allowed).toBe(true);
  });
});
