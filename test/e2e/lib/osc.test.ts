import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { parse } from "yaml";
import { oscSecret, reconcileOsc, type ScenarioIdentity } from "./osc.ts";

const id: ScenarioIdentity = {
  agentVersion: "v1.2.3",
  apiServerUrl: "https://10.0.2.100:6443",
  caPem: "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n",
  oscSecretName: "gardener-node-agent-e2e-0123456789abcdef",
  kubernetesVersion: "1.33.0",
  tokenSecretName: "gardener-valitail",
  tokenPath: "/var/lib/valitail/auth-token",
};

type Doc = { spec: { files: { path: string; permissions: number; content: { inline: { data: string } } }[]; units: { name: string }[] } };

describe("reconcileOsc", () => {
  test("writes permissions as decimal numbers, as gardenlet does", () => {
    const doc = parse(reconcileOsc(id, 1).yaml) as Doc;
    const modes = Object.fromEntries(doc.spec.files.map((f) => [f.path, f.permissions]));
    expect(modes).toEqual({
      "/var/lib/gardener-node-agent/config-v1.2.3.yaml": 384,
      "/var/lib/gardener-node-agent/cluster-ca.crt": 416,
      "/etc/gna-e2e/kubelet.conf": 420,
      "/opt/gna-e2e/bin/kubelet-standin": 493,
      "/etc/gna-e2e/oneshot.conf": 384,
    });
  });

  test("generation 2 changes only the stand-in kubelet config", () => {
    const one = parse(reconcileOsc(id, 1).yaml) as Doc;
    const two = parse(reconcileOsc(id, 2).yaml) as Doc;
    const changed = two.spec.files.filter((f, i) => JSON.stringify(f) !== JSON.stringify(one.spec.files[i])).map((f) => f.path);
    expect(changed).toEqual(["/etc/gna-e2e/kubelet.conf"]);
    expect(two.spec.units).toEqual(one.spec.units);
  });

  test("generation 3 adds the slow unit and its file", () => {
    const three = reconcileOsc(id, 3);
    expect(three.units).toEqual([
      "gardener-node-agent.service",
      "gna-e2e-kubelet.service",
      "gna-e2e-oneshot.service",
      "gna-e2e-slow.service",
    ]);
    expect(three.files.map((f) => f.path)).toContain("/etc/gna-e2e/slow.conf");
  });
});

describe("oscSecret", () => {
  test("carries osc.yaml and its sha256 as checksum/data-script", () => {
    const osc = reconcileOsc(id, 1);
    const secret = oscSecret(id, osc);
    const data = secret["data"] as Record<string, string>;
    const yaml = Buffer.from(data["osc.yaml"] ?? "", "base64").toString();
    expect(yaml).toBe(osc.yaml);
    expect(secret.metadata.annotations?.["checksum/data-script"]).toBe(createHash("sha256").update(yaml).digest("hex"));
  });
});
