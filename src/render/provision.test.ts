import { describe, expect, test } from "bun:test";
import { decodeConfig } from "../config/index.ts";
import { filesToDiskScript, unitsToDiskScript } from "./bash.ts";
import { resolveFile, resolveUnit } from "./content.ts";
import { RenderError } from "./errors.ts";
import {
  buildProvisionOsc,
  compactShell,
  cosignRefusal,
  initScriptForUserData,
  pullReference,
  renderInitConfig,
  renderInitScript,
} from "./provision.ts";
import { renderUserData, renderUserDataGzip } from "./render.ts";

const initTemplate =
  '#!/bin/sh\nIMAGE="${GNA_IMAGE:-__IMAGE__}"\nREGISTRY_CA_API_SERVER="${GNA_REGISTRY_CA_API_SERVER:-__REGISTRY_CA_API_SERVER__}"\n' +
  'case "$IMAGE" in "" | __IMAGE__) exit 1 ;; esac\n';
const input = {
  server: "https://api.example.com",
  caBundle: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
  image: `registry.example.com/gardener-node-agent@sha256:${"a".repeat(64)}`,
  initScript: initTemplate,
  secretName: "gardener-node-agent-pool-1234567890abcdef",
  kubernetesVersion: "1.33.0",
  version: "v1.110.0",
};

describe("renderInitConfig", () => {
  // gardenlet's serialisation of the same init config (spec §3.2 example): zero values written out.
  const gardenletForm = [
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
    "    kubernetesVersion: 1.33.0",
    "    secretName: osc-secret-name",
    "  systemdUnitCheck: {}",
    "  token:",
    "    syncPeriod: 12h0m0s",
    "kind: NodeAgentConfiguration",
    'logFormat: ""',
    'logLevel: ""',
    "server: {}",
    "",
  ].join("\n");
  const minimal = { server: "https://localhost", secretName: "osc-secret-name", kubernetesVersion: "1.33.0" };

  test("should serialise the init config like gardenlet without its zero values, apiVersion and kind", () => {
    expect(renderInitConfig(minimal)).toBe(
      [
        "apiServer:",
        "  caFile: /var/lib/gardener-node-agent/cluster-ca.crt",
        "  server: https://localhost",
        "bootstrap: {}",
        "controllers:",
        "  operatingSystemConfig:",
        "    kubernetesVersion: 1.33.0",
        "    secretName: osc-secret-name",
        "  token:",
        "    syncPeriod: 12h0m0s",
        "",
      ].join("\n"),
    );
  });

  test("should decode to the same configuration as gardenlet's serialisation", () => {
    expect(decodeConfig(renderInitConfig(minimal), "config.yaml")).toEqual(decodeConfig(gardenletForm, "config.yaml"));
    const withVolume = renderInitConfig({ ...minimal, kubeletDataVolumeSize: 1369088 });
    const gardenletWithVolume = gardenletForm.replace("bootstrap: {}\n", "bootstrap:\n  kubeletDataVolumeSize: 1369088\n");
    expect(decodeConfig(withVolume, "config.yaml")).toEqual(decodeConfig(gardenletWithVolume, "config.yaml"));
  });

  test("should carry the kubelet data volume size in bytes", () => {
    const yaml = renderInitConfig({ ...input, kubeletDataVolumeSize: 1369088 });
    expect(yaml).toContain("bootstrap:\n  kubeletDataVolumeSize: 1369088\n");
    expect(decodeConfig(yaml, "config.yaml").bootstrap?.kubeletDataVolumeSize).toBe(1369088);
  });
});

describe("compactShell", () => {
  test("should drop comment lines, blank lines and indentation but keep the shebang and heredoc bodies", () => {
    const script = [
      "#!/bin/sh",
      "# a comment",
      "",
      "f() {",
      "  echo 'x' # trailing stays",
      "}",
      "cat > k <<'EOF'",
      "  # kept",
      "",
      "EOF",
      "  done",
      "",
    ].join("\n");
    expect(compactShell(script)).toBe(
      ["#!/bin/sh", "f() {", "echo 'x' # trailing stays", "}", "cat > k <<'EOF'", "  # kept", "", "EOF", "done", ""].join("\n"),
    );
  });
});

describe("initScriptForUserData", () => {
  const script = [
    "#!/bin/sh",
    'R="${X:-__REGISTRY_CA_API_SERVER__}"',
    'if [ -n "$REGISTRY_CA_API_SERVER" ] && true; then',
    "  if x; then",
    "    y",
    "  fi",
    "fi",
    'K="$CONF/cosign.pub"',
    'if [ -f "$K" ]; then',
    "  verify",
    "fi",
    "get() {",
    "}",
    "",
  ].join("\n");

  test("should drop the registry-CA block when the registry CA is off", () => {
    expect(initScriptForUserData(script, { registryCa: false, verifySignature: true })).toBe(
      [
        "#!/bin/sh",
        'R="${X:-__REGISTRY_CA_API_SERVER__}"',
        'K="$CONF/cosign.pub"',
        'if [ -f "$K" ]; then',
        "verify",
        "fi",
        "get() {",
        "}",
        "",
      ].join("\n"),
    );
  });

  test("should keep both blocks, compacted, when the registry CA and the signature check are on", () => {
    expect(initScriptForUserData(script, { registryCa: true, verifySignature: true })).toBe(compactShell(script));
    expect(compactShell(script)).toContain("if x; then\ny\nfi\nfi\n");
  });

  test("should put the refusal in place of the signature check when there is no cosign key", () => {
    const out = initScriptForUserData(script, { registryCa: true, verifySignature: false });
    expect(out).toContain(`K="$CONF/cosign.pub"\n${cosignRefusal}\nget() {\n`);
    expect(out).not.toContain("verify\n");
  });

  test("should drop the unrendered-template check, and lines marked for the signature check without it", () => {
    const marked = [
      "#!/bin/sh",
      '[ -n "${IMAGE%__IMAGE__}" ] || die "no image reference"',
      "case $c in",
      "  404) return 1 ;; # signature check only",
      "esac",
      "",
    ].join("\n");
    expect(initScriptForUserData(marked, { registryCa: false, verifySignature: true })).toBe(
      "#!/bin/sh\ncase $c in\n404) return 1 ;;\nesac\n",
    );
    expect(initScriptForUserData(marked, { registryCa: false, verifySignature: false })).toBe("#!/bin/sh\ncase $c in\nesac\n");
  });
});

describe("renderInitScript", () => {
  test("should fill in the image and an empty registry-CA server at the template points only", () => {
    const out = renderInitScript(initTemplate, "reg:5000/gna:v1");
    expect(out.split("\n").slice(1, 4)).toEqual([
      'IMAGE="${GNA_IMAGE:-reg:5000/gna:v1}"',
      'REGISTRY_CA_API_SERVER="${GNA_REGISTRY_CA_API_SERVER:-}"',
      'case "$IMAGE" in "" | __IMAGE__) exit 1 ;; esac',
    ]);
  });

  test("should put the API server URL at line 3 when the registry CA is on", () => {
    expect(renderInitScript(initTemplate, "reg/gna:v1", "https://api.example.com:443").split("\n")[2]).toBe(
      'REGISTRY_CA_API_SERVER="${GNA_REGISTRY_CA_API_SERVER:-https://api.example.com:443}"',
    );
  });

  test("should refuse an image reference that would break the shell quoting", () => {
    expect(() => renderInitScript(initTemplate, 'x"; rm -rf /; "')).toThrow(RenderError);
  });
});

describe("buildProvisionOsc", () => {
  const osc = buildProvisionOsc(input);

  test("should list the node-init files in spec order with their modes and encodings", () => {
    expect(
      (osc.spec.files ?? []).map((f) => [
        f.path,
        (f.permissions ?? 0).toString(8),
        f.content.inline?.encoding,
        f.content.transmitUnencoded ?? false,
      ]),
    ).toEqual([
      ["/var/lib/gardener-node-agent/cluster-ca.crt", "640", "b64", false],
      ["/var/lib/gardener-node-agent/credentials/bootstrap-token", "640", "", true],
      ["/var/lib/gardener-node-agent/init.sh", "755", "b64", false],
      ["/var/lib/gardener-node-agent/machine-name", "640", "", true],
      ["/var/lib/gardener-node-agent/config-v1.110.0.yaml", "600", "b64", false],
    ]);
  });

  test("should have exactly the init unit, enabled and started, depending on init.sh", () => {
    expect(osc.spec.units).toEqual([
      expect.objectContaining({
        name: "gardener-node-init.service",
        command: "start",
        enable: true,
        filePaths: ["/var/lib/gardener-node-agent/init.sh"],
      }),
    ]);
    expect(osc.spec.units?.[0]?.content).toContain("Requires=containerd.service\n");
  });

  test("should add the CA refresh script and a soft containerd dependency with the registry CA (scenario 10)", () => {
    const withCa = buildProvisionOsc({ ...input, registryCa: true });
    expect((withCa.spec.files ?? []).map((f) => f.path)).toContain("/var/lib/ssl/update-local-ca-certificates.sh");
    expect(withCa.spec.files?.[4]).toMatchObject({ path: "/var/lib/ssl/update-local-ca-certificates.sh", permissions: 0o744 });
    expect(withCa.spec.units?.[0]?.content?.split("\n")[2]).toBe("Wants=containerd.service");
  });

  test("should add cosign.pub (0644) before the config and keep init.sh's signature check with a cosign key", () => {
    const key = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----\n";
    const initSh = [
      "#!/bin/sh",
      'IMAGE="${GNA_IMAGE:-__IMAGE__}"',
      'R="${X:-__REGISTRY_CA_API_SERVER__}"',
      'if [ -f "$K" ]; then',
      "  verify",
      "fi",
      "",
    ].join("\n");
    const files = buildProvisionOsc({ ...input, initScript: initSh, cosignPublicKey: key }).spec.files ?? [];
    expect(files.map((f) => f.path).slice(-2)).toEqual([
      "/var/lib/gardener-node-agent/cosign.pub",
      "/var/lib/gardener-node-agent/config-v1.110.0.yaml",
    ]);
    expect(files.at(-2)).toMatchObject({
      permissions: 0o644,
      content: { inline: { encoding: "b64", data: Buffer.from(key).toString("base64") } },
    });
    const script = (f: typeof files) =>
      Buffer.from(f.find((x) => x.path.endsWith("/init.sh"))?.content.inline?.data ?? "", "base64").toString();
    expect(script(files)).toContain("verify\n");
    expect(script(buildProvisionOsc({ ...input, initScript: initSh }).spec.files ?? [])).toContain(`${cosignRefusal}\n`);
    expect(() => buildProvisionOsc({ ...input, cosignPublicKey: "ssh-ed25519 AAAA" })).toThrow(
      "cosignPublicKey: the cosign key is not one PEM public key",
    );
  });

  test("should refuse gzip user data for a placeholder file that is not one line", () => {
    const multi = {
      ...osc,
      spec: { ...osc.spec, files: [{ path: "/x", content: { inline: { encoding: "", data: "a\nb" }, transmitUnencoded: true } }] },
    };
    expect(() => renderUserDataGzip(multi)).toThrow("spec.files[0].content: a transmitUnencoded file in gzip user data must be one line");
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

describe("compactShell on cloud-init/init.sh", () => {
  test("should leave cloud-init/init.sh valid for dash and keep every line of code", async () => {
    const initSh = await Bun.file(new URL("../../cloud-init/init.sh", import.meta.url)).text();
    const script = compactShell(initSh);
    const check = Bun.spawnSync(["dash", "-n"], { stdin: new TextEncoder().encode(script) });
    expect(check.exitCode).toBe(0);
    const code = (s: string) =>
      s
        .split("\n")
        .map((l) => l.trimStart())
        .filter((l) => l !== "" && !l.startsWith("#"));
    expect(code(script)).toEqual(code(initSh));
    expect(script.length).toBeLessThan(initSh.length);
  });
});

describe("pullReference", () => {
  test.each([
    ["gardener/node-agent:v1", "registry-1.docker.io/gardener/node-agent:v1"],
    ["busybox", "registry-1.docker.io/library/busybox:latest"],
    [`docker.io/x/y@sha256:${"a".repeat(64)}`, `registry-1.docker.io/x/y@sha256:${"a".repeat(64)}`],
    [`10.0.2.101:5000/gna:v1@sha256:${"b".repeat(64)}`, `10.0.2.101:5000/gna:v1@sha256:${"b".repeat(64)}`],
    [
      "europe-docker.pkg.dev/gardener-project/releases/gardener/gardener-node-agent:v1.110.0",
      "europe-docker.pkg.dev/gardener-project/releases/gardener/gardener-node-agent:v1.110.0",
    ],
  ])("should write %s as %s for init.sh", (image, expected) => {
    expect(pullReference(image)).toBe(expected);
  });

  test("should refuse a scheme and a bad digest, naming the field", () => {
    expect(() => pullReference("http://10.0.2.100:5000/gna:v1")).toThrow("image: the image reference takes no scheme");
    expect(() => pullReference("reg.example.com/gna@sha256:abc")).toThrow(/^image: invalid image reference .*digest must be sha256/);
  });
});
