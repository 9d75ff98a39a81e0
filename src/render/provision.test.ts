import { describe, expect, test } from "bun:test";
import { decodeConfig } from "../config/index.ts";
import { filesToDiskScript, unitsToDiskScript } from "./bash.ts";
import { resolveFile, resolveUnit } from "./content.ts";
import { RenderError } from "./errors.ts";
import { buildProvisionOsc, renderInitConfig, renderInitScript } from "./provision.ts";
import { renderUserData } from "./render.ts";

const initTemplate = '#!/bin/sh\nIMAGE="${GNA_IMAGE:-__IMAGE__}"\ncase "$IMAGE" in "" | __IMAGE__) exit 1 ;; esac\n';
const input = {
  server: "https://api.example.com",
  caBundle: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
  image: "registry.example.com/gardener-node-agent@sha256:" + "a".repeat(64),
  initScript: initTemplate,
  secretName: "gardener-node-agent-pool-1234567890abcdef",
  kubernetesVersion: "1.33.0",
  version: "v1.110.0",
};

describe("renderInitConfig", () => {
  test("should serialise the init config like gardenlet (spec §3.2 example)", () => {
    expect(renderInitConfig({ server: "https://localhost", secretName: "osc-secret-name", kubernetesVersion: "1.2.3" })).toBe(
      [
        "apiServer:",
        "  caFile: /var/lib/gardener-node-agent/cluster-ca.crt",
        "  server: https://localhost",
        "apiVersion: nodeagent.config.gardener.cloud/v1alpha1",
        "bootstrap: {}",
        "clientConnection:",
        '  acceptContentTypes: ""',
        "  burst: 0",
        '  contentType: ""',
        '  kubeconfig: ""',
        "  qps: 0",
        "controllers:",
        "  operatingSystemConfig:",
        "    kubernetesVersion: 1.2.3",
        "    secretName: osc-secret-name",
        "  systemdUnitCheck: {}",
        "  token:",
        "    syncPeriod: 12h0m0s",
        "kind: NodeAgentConfiguration",
        'logFormat: ""',
        'logLevel: ""',
        "server: {}",
        "",
      ].join("\n"),
    );
  });

  test("should carry the kubelet data volume size in bytes", () => {
    const yaml = renderInitConfig({ ...input, kubeletDataVolumeSize: 1369088 });
    expect(yaml).toContain("bootstrap:\n  kubeletDataVolumeSize: 1369088\n");
    expect(decodeConfig(yaml, "config.yaml").bootstrap?.kubeletDataVolumeSize).toBe(1369088);
  });
});

describe("renderInitScript", () => {
  test("should fill in the image at the template point only", () => {
    const out = renderInitScript(initTemplate, "reg:5000/gna:v1");
    expect(out).toBe('#!/bin/sh\nIMAGE="${GNA_IMAGE:-reg:5000/gna:v1}"\ncase "$IMAGE" in "" | __IMAGE__) exit 1 ;; esac\n');
  });

  test("should refuse an image reference that would break the shell quoting", () => {
    expect(() => renderInitScript(initTemplate, 'x"; rm -rf /; "')).toThrow(RenderError);
  });
});

describe("buildProvisionOsc", () => {
  const osc = buildProvisionOsc(input);

  test("should list the node-init files in spec order with their modes and encodings", () => {
    expect((osc.spec.files ?? []).map((f) => [f.path, (f.permissions ?? 0).toString(8), f.content.inline?.encoding, f.content.transmitUnencoded ?? false])).toEqual([
      ["/var/lib/gardener-node-agent/cluster-ca.crt", "640", "b64", false],
      ["/var/lib/gardener-node-agent/credentials/bootstrap-token", "640", "", true],
      ["/var/lib/gardener-node-agent/init.sh", "755", "b64", false],
      ["/var/lib/gardener-node-agent/machine-name", "640", "", true],
      ["/var/lib/gardener-node-agent/config-v1.110.0.yaml", "600", "b64", false],
    ]);
  });

  test("should have exactly the init unit, enabled and started, depending on init.sh", () => {
    expect(osc.spec.units).toEqual([
      expect.objectContaining({ name: "gardener-node-init.service", command: "start", enable: true, filePaths: ["/var/lib/gardener-node-agent/init.sh"] }),
    ]);
    expect(osc.spec.units?.[0]?.content).toContain("Requires=containerd.service\n");
  });

  test("should keep the MCM placeholders as literal lines in the bash user data", () => {
    const lines = renderUserData(osc, { format: "bash" }).split("\n");
    expect(lines).toContain("<<BOOTSTRAP_TOKEN>>");
    expect(lines).toContain("<<MACHINE_NAME>>");
  });

  test("should keep files and units of node-init with a small init.sh below 4096 characters (scenario 13)", () => {
    const files = (osc.spec.files ?? []).map((f, i) => resolveFile(f, i, {}));
    const units = (osc.spec.units ?? []).map(resolveUnit);
    expect((filesToDiskScript(files) + unitsToDiskScript(units)).length).toBeLessThan(4096);
  });
});
