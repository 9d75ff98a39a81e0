import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { decodeInline, decodeOsc } from "../../src/osc/index.ts";
import type { Osc } from "../../src/osc/index.ts";
import {
  filesToDiskScript,
  RenderError,
  renderUserData,
  resolveFile,
  resolveUnit,
  unitsToDiskScript,
  wrapProvisionOscIntoOneshotScript,
} from "../../src/render/index.ts";

const fixtures = join(import.meta.dir, "../fixtures/render");
const fixture = (name: string) => readFile(join(fixtures, name), "utf8");
const osc = async (name: string): Promise<Osc> => decodeOsc(await fixture(name));
const secrets = { foo: { bar: "bar-content" } };

describe("user-data renderer golden output", () => {
  test("files: secretRef, plain, b64 and unencoded content, chmod in octal (scenario 40)", async () => {
    const o = await osc("40-files.osc.yaml");
    const files = (o.spec.files ?? []).map((f, i) => resolveFile(f, i, secrets));
    expect(filesToDiskScript(files)).toBe(await fixture("40-files.expected.sh"));
  });

  test("units: drop-ins before the next unit, content base64-encoded (scenario 42)", async () => {
    const o = await osc("42-units.osc.yaml");
    expect(unitsToDiskScript((o.spec.units ?? []).map(resolveUnit))).toBe(await fixture("42-units.expected.sh"));
  });

  test.each(["43-wrapper", "43-wrapper-header"])("one-shot wrapper keeps leading # lines above the guard (%s)", async (name) => {
    expect(wrapProvisionOscIntoOneshotScript(await fixture(`${name}.input.sh`))).toBe(await fixture(`${name}.expected.sh`));
  });

  test("full document with a placeholder file and a unit with drop-in (scenario 44)", async () => {
    const out = renderUserData(await osc("44-full.osc.yaml"), { format: "bash" });
    expect(out).toBe(await fixture("44-full.expected.sh"));
    expect(out.split("\n")).toContain("<<BOOTSTRAP_TOKEN>>");
  });

  test("is deterministic", async () => {
    const o = await osc("40-files.osc.yaml");
    expect(renderUserData(o, { format: "bash", secrets })).toBe(renderUserData(o, { format: "bash", secrets }));
    expect(renderUserData(o, { format: "cloud-config", secrets })).toBe(renderUserData(o, { format: "cloud-config", secrets }));
  });

  test("a missing referenced secret is a NotFound error and nothing is rendered (scenario 41)", async () => {
    const o = await osc("40-files.osc.yaml");
    const err = (() => {
      try {
        return renderUserData(o, { format: "bash" });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(RenderError);
    expect((err as RenderError).kind).toBe("secret-not-found");
    expect((err as RenderError).message).toBe('spec.files[0].content.secretRef: secrets "foo" not found');
  });
});

/** Expected on-disk result straight from the OSC (what the OSC controller would write), umask 022. */
function expectedTree(o: Osc): Map<string, { data: Buffer; mode: number }> {
  const out = new Map<string, { data: Buffer; mode: number }>();
  for (const f of o.spec.files ?? []) {
    const { inline, secretRef, transmitUnencoded } = f.content;
    let data =
      inline !== undefined
        ? Buffer.from(decodeInline(inline.encoding, inline.data))
        : Buffer.from(secretRef !== undefined ? "bar-content" : "");
    // The unencoded heredoc adds a newline (spec §3.2: consumers trim).
    if (transmitUnencoded === true) data = Buffer.concat([data, Buffer.from("\n")]);
    out.set(f.path, { data, mode: f.permissions ?? 0o644 });
  }
  for (const u of o.spec.units ?? []) {
    if (u.content !== undefined) out.set(`/etc/systemd/system/${u.name}`, { data: Buffer.from(u.content), mode: 0o644 });
    for (const d of u.dropIns ?? []) out.set(`/etc/systemd/system/${u.name}.d/${d.name}`, { data: Buffer.from(d.content), mode: 0o644 });
  }
  return out;
}

/**
 * A scratch machine for the rendered scripts: a temp dir holding `root` (with /etc/systemd/system) and a
 * systemctl stub that records its arguments instead of touching this machine's systemd; made anew for
 * each test of the calling describe block.
 */
function useScratchMachine(prefix: string): { readonly dir: string; readonly root: string } {
  const m = { dir: "", root: "" };
  beforeEach(async () => {
    m.dir = await mkdtemp(join(tmpdir(), prefix));
    m.root = join(m.dir, "root");
    await mkdir(join(m.root, "etc/systemd/system"), { recursive: true });
    await mkdir(join(m.dir, "bin"));
    await writeFile(join(m.dir, "bin/systemctl"), `#!/bin/bash\necho "$*" >> "${m.dir}/systemctl.log"\n`);
    await chmod(join(m.dir, "bin/systemctl"), 0o755);
  });
  afterEach(async () => {
    await rm(m.dir, { recursive: true, force: true });
  });
  return m;
}

/**
 * The renderer stays pure and exact (absolute host paths), so the tests relocate a copy: every quoted
 * absolute path `"/…"` and the unquoted marker paths get the temp root prefixed. Base64 payloads and the
 * placeholder lines contain neither, so nothing else changes.
 */
const relocate = (script: string, root: string): string =>
  script.replaceAll('"/', `"${root}/`).replaceAll(" /var/lib/osc", ` ${root}/var/lib/osc`);

/** Runs a script of the scratch machine under umask 022 with the systemctl stub first on PATH. */
const runScript = (m: { dir: string }, script: string) =>
  Bun.spawnSync(["bash", "-c", `umask 022; exec bash ${script}`], { env: { PATH: `${join(m.dir, "bin")}:/usr/bin:/bin` } });

/** The scratch root holds exactly the OSC's files and units with their modes, and systemctl saw one reload and each unit's enable and restart. */
async function expectApplied(m: { dir: string; root: string }, o: Osc): Promise<void> {
  for (const [path, want] of expectedTree(o)) {
    const real = join(m.root, path);
    expect({ path, data: (await readFile(real)).toString("base64") }).toEqual({ path, data: want.data.toString("base64") });
    expect({ path, mode: ((await stat(real)).mode & 0o7777).toString(8) }).toEqual({ path, mode: want.mode.toString(8) });
  }
  expect(await readFile(join(m.dir, "systemctl.log"), "utf8")).toBe(systemctlLog(o));
}

const systemctlLog = (o: Osc): string => {
  const units = (o.spec.units ?? []).map((u) => u.name);
  return units.length === 0 ? "daemon-reload\n" : `daemon-reload\n${units.map((u) => `enable ${u}\nrestart --no-block ${u}\n`).join("")}`;
};

describe("executing the rendered bash script", () => {
  const m = useScratchMachine("gna-render-run-");

  async function run(script: string): Promise<{ code: number; stdout: string }> {
    const relocated = relocate(script, m.root);
    expect(relocated).not.toMatch(/[ "]\/(etc|var)\//);
    await writeFile(join(m.dir, "user-data.sh"), relocated);
    const proc = runScript(m, join(m.dir, "user-data.sh"));
    return { code: proc.exitCode, stdout: proc.stdout.toString() };
  }

  test.each([
    ["40-files.osc.yaml", secrets],
    ["44-full.osc.yaml", {}],
  ])("writes exactly the files and modes of %s and performs the work once", async (name, sec) => {
    const o = await osc(name);
    const script = renderUserData(o, { format: "bash", secrets: sec });
    expect((await run(script)).code).toBe(0);
    await expectApplied(m, o);
    expect((await stat(join(m.root, "var/lib/osc/provision-osc-applied"))).isFile()).toBe(true);

    // Second run: the guard stops it before anything is written or restarted.
    await writeFile(join(m.root, path0(o)), "changed by the node");
    const again = await run(script);
    expect(again).toEqual({ code: 0, stdout: "Provision OSC already applied, exiting...\n" });
    expect(await readFile(join(m.root, path0(o)), "utf8")).toBe("changed by the node");
    expect(await readFile(join(m.dir, "systemctl.log"), "utf8")).toBe(systemctlLog(o));
  });
});

const path0 = (o: Osc): string => o.spec.files?.[0]?.path ?? "";

type WriteFileEntry = { path: string; encoding?: string; content: string; permissions?: string };
/** The packed cloud-config's parts: plain write_files (MCM placeholders), the gz+b64 script, runcmd. */
function unpack(userData: string): { plain: WriteFileEntry[]; script: string; runcmd: string[] } {
  const doc = Bun.YAML.parse(userData) as { write_files: WriteFileEntry[]; runcmd: string[] };
  const packed = doc.write_files.filter((f) => f.encoding === "gz+b64");
  expect(packed).toHaveLength(1);
  return {
    plain: doc.write_files.filter((f) => f.encoding === undefined),
    script: gunzipSync(Buffer.from(packed[0]!.content, "base64")).toString(),
    runcmd: doc.runcmd,
  };
}

describe("executing the packed cloud-config (render --provision)", () => {
  const m = useScratchMachine("gna-render-packed-");

  test.each([
    ["40-files.osc.yaml", secrets],
    ["44-full.osc.yaml", {}],
  ])("writes exactly the files and modes of %s, leaving only the placeholder files to write_files", async (name, sec) => {
    const o = await osc(name);
    const { plain, script, runcmd } = unpack(renderUserData(o, { format: "cloud-config", secrets: sec, packed: true }));
    expect(runcmd).toEqual(["/var/lib/osc/provision-osc.sh"]);
    const unencoded = (o.spec.files ?? []).filter((f) => f.content.transmitUnencoded === true).map((f) => f.path);
    expect(plain.map((f) => f.path)).toEqual(unencoded);
    // What cloud-init's write_files does for the plain entries (MCM replaced nothing here).
    for (const f of plain) {
      await mkdir(join(m.root, f.path, ".."), { recursive: true });
      await writeFile(join(m.root, f.path), f.content, { mode: Number.parseInt(f.permissions ?? "644", 8) });
      await chmod(join(m.root, f.path), Number.parseInt(f.permissions ?? "644", 8));
    }
    await writeFile(join(m.dir, "provision.sh"), relocate(script, m.root));
    const proc = runScript(m, join(m.dir, "provision.sh"));
    expect(proc.stderr.toString()).toBe("");
    expect(proc.exitCode).toBe(0);
    await expectApplied(m, o);
    const again = runScript(m, join(m.dir, "provision.sh"));
    expect(again.stdout.toString()).toBe("Provision OSC already applied, exiting...\n");
  });
});

describe("cloud-init/cloud-config.yaml.tmpl", () => {
  const repo = join(import.meta.dir, "../..");
  const values = {
    "<<API_SERVER>>": "https://10.0.2.100:6443",
    "<<CLUSTER_CA_BASE64>>": Buffer.from("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").toString("base64"),
    "<<IMAGE>>": `10.0.2.101:5000/gardener-node-agent@sha256:${"b".repeat(64)}`,
    "<<OSC_SECRET_NAME>>": "gardener-node-agent-pool-0123456789abcdef",
    "<<KUBERNETES_VERSION>>": "1.33.0",
    "<<AGENT_VERSION>>": "v1.110.0",
  };
  type WriteFile = { path: string; encoding?: string; content: string; permissions?: string };
  const filesOf = (doc: string): Map<string, { data: string; permissions: string | undefined }> => {
    const parsed = Bun.YAML.parse(doc) as { write_files: WriteFile[] };
    return new Map(
      parsed.write_files.map((f) => [
        f.path,
        {
          // Plain template entries carry the extra newline the unencoded form adds; compare trimmed text.
          data: (f.encoding === "b64" ? Buffer.from(f.content, "base64").toString() : f.content).trimEnd(),
          permissions: f.permissions,
        },
      ]),
    );
  };

  test("is up to date with init.sh and the provision OSC builder", async () => {
    const { renderCloudConfigTemplate } = await import("../../cloud-init/cloud-config-template.ts");
    const initSh = await readFile(join(repo, "cloud-init/init.sh"), "utf8");
    const committed = await readFile(join(repo, "cloud-init/cloud-config.yaml.tmpl"), "utf8");
    // init.sh changed without regenerating: `bun run cloud-init/generate-cloud-config.ts` fixes this.
    expect({ stale: committed !== renderCloudConfigTemplate(initSh), fix: "bun run cloud-init/generate-cloud-config.ts" }).toEqual({
      stale: false,
      fix: "bun run cloud-init/generate-cloud-config.ts",
    });
  });

  test("filled in by text replacement places the same files as render --provision", async () => {
    const { buildProvisionOsc } = await import("../../src/render/index.ts");
    let filled = await readFile(join(repo, "cloud-init/cloud-config.yaml.tmpl"), "utf8");
    for (const [k, v] of Object.entries(values)) filled = filled.replaceAll(k, v);
    expect(filled).not.toMatch(/<<(?!BOOTSTRAP_TOKEN>>|MACHINE_NAME>>)[A-Z_]+>>/);
    const rendered = renderUserData(
      buildProvisionOsc({
        server: values["<<API_SERVER>>"],
        caBundle: Buffer.from(values["<<CLUSTER_CA_BASE64>>"], "base64").toString(),
        image: values["<<IMAGE>>"],
        initScript: await readFile(join(repo, "cloud-init/init.sh"), "utf8"),
        secretName: values["<<OSC_SECRET_NAME>>"],
        kubernetesVersion: values["<<KUBERNETES_VERSION>>"],
        version: values["<<AGENT_VERSION>>"],
      }),
      { format: "cloud-config" },
    );
    expect(filesOf(filled)).toEqual(filesOf(rendered));
  });
});

describe("gardener-node-agent render (CLI)", () => {
  const repo = join(import.meta.dir, "../..");
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "gna-render-cli-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const cli = (...args: string[]) => {
    const p = Bun.spawnSync([process.execPath, join(repo, "src/cli/main.ts"), "render", ...args], { cwd: dir });
    return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
  };

  test("prints the bash user data of an OSC file with secrets from a file", async () => {
    await writeFile(join(dir, "secrets.yaml"), "kind: Secret\nmetadata:\n  name: foo\ndata:\n  bar: YmFyLWNvbnRlbnQ=\n");
    const out = cli("--osc", join(fixtures, "40-files.osc.yaml"), "--secrets", join(dir, "secrets.yaml"));
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('cat << EOF | base64 -d > "/foo/bar.txt"\nYmFyLWNvbnRlbnQ=\nEOF');
  });

  test("prints node-init provision user data as cloud-config with the MCM placeholders", async () => {
    await writeFile(join(dir, "ca.crt"), "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    const out = cli(
      "--provision",
      "--server=https://10.0.2.100:6443",
      "--ca-file=ca.crt",
      "--image=10.0.2.101:5000/gardener-node-agent:v1",
      "--secret-name=gna-pool",
      "--kubernetes-version=1.33.0",
      "--kubelet-data-volume-size=2147483648",
      "--agent-version=v1.110.0",
    );
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    const { plain, script } = unpack(out.stdout);
    expect(plain).toEqual([
      { path: "/var/lib/gardener-node-agent/credentials/bootstrap-token", content: "<<BOOTSTRAP_TOKEN>>\n", permissions: "0640" },
      { path: "/var/lib/gardener-node-agent/machine-name", content: "<<MACHINE_NAME>>\n", permissions: "0640" },
    ]);
    const placed = [...script.matchAll(/> "([^"]+)"/g)].map((m) => m[1]);
    expect(placed).toEqual([
      "/var/lib/gardener-node-agent/cluster-ca.crt",
      "/var/lib/gardener-node-agent/init.sh",
      "/var/lib/gardener-node-agent/config-v1.110.0.yaml",
      "/etc/systemd/system/gardener-node-init.service",
    ]);
    expect(script).toContain("bootstrap:\n  kubeletDataVolumeSize: 2147483648\n");
    expect(script).toContain('IMAGE="${GNA_IMAGE:-10.0.2.101:5000/gardener-node-agent:v1}"');
  });

  const rsa3072Ca = () => {
    const ca = Bun.spawnSync([
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "rsa:3072",
      "-nodes",
      "-keyout",
      "/dev/null",
      "-subj",
      "/CN=kubernetes",
      "-days",
      "1",
    ]);
    expect(ca.exitCode).toBe(0);
    return ca.stdout;
  };
  const productionFlags = [
    "--provision",
    "--server=https://api.prod-eu1.my-project.shoot.example.com",
    "--ca-file=ca.crt",
    "--image=europe-docker.pkg.dev/gardener-project/releases/gardener/gardener-node-agent:v1.110.0",
    "--secret-name=gardener-node-agent-worker-z1-9f3a1",
    "--kubernetes-version=1.33.4",
    "--kubelet-data-volume-size=53687091200",
  ];
  const token = "k8s3df.0123456789abcdef";
  const machine = "shoot--my-project--prod-eu1-worker-z1-7d9c5-x2x4k";
  // MCM's replacement works on bytes (Go strings); latin1 maps each byte to one char and back.
  const substitute = (data: Uint8Array): Buffer =>
    Buffer.from(Buffer.from(data).toString("latin1").replace("<<BOOTSTRAP_TOKEN>>", token).replace("<<MACHINE_NAME>>", machine), "latin1");
  const cliBytes = (...args: string[]) => Bun.spawnSync([process.execPath, join(repo, "src/cli/main.ts"), "render", ...args], { cwd: dir });

  // Issues 15 and 25: node-init user data <= 4096 bytes with 300 to spare, with a realistic CA (one RSA-3072
  // certificate; bench/user-data.bench.ts reports the same figures). The gzip form makes it (~3.75 KB); the text
  // form is a regression bound (~5.15 KB).
  test("keeps gzip provision user data with an RSA-3072 CA and MCM's substitutions within 4096 - 300 bytes", async () => {
    await writeFile(join(dir, "ca.crt"), rsa3072Ca());
    const text = cli(...productionFlags);
    expect(text.code).toBe(0);
    expect(Buffer.byteLength(substitute(Buffer.from(text.stdout)))).toBeLessThanOrEqual(5400);
    const gz = cliBytes(...productionFlags, "--format=gzip");
    expect(gz.exitCode).toBe(0);
    expect(substitute(gz.stdout).length).toBeLessThanOrEqual(4096 - 300);
  });

  test("prints gzip user data that Python's gzip (cloud-init's reader) inflates after MCM's substitution, and whose script places the substituted values", async () => {
    await writeFile(join(dir, "ca.crt"), "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    const gz = cliBytes(...productionFlags, "--format=gzip", "--agent-version=v1.110.0");
    expect(gz.stderr.toString()).toBe("");
    expect(gz.exitCode).toBe(0);
    expect([...gz.stdout.subarray(0, 4)]).toEqual([0x1f, 0x8b, 8, 0x10]); // gzip, deflate, FCOMMENT
    const received = substitute(gz.stdout);
    await writeFile(join(dir, "user-data.txt"), received);
    const py = Bun.spawnSync([
      "python3",
      "-c",
      "import gzip,sys; sys.stdout.buffer.write(gzip.decompress(open(sys.argv[1],'rb').read()))",
      join(dir, "user-data.txt"),
    ]);
    expect(py.stderr.toString()).toBe("");
    const script = py.stdout.toString();
    expect(script).toStartWith('#!/bin/bash\nif [ -f "/var/lib/osc/provision-osc-applied" ]; then\n');
    expect(script).not.toMatch(/<<[A-Z_]+>>/);
    expect(script).toContain('cat > "/var/lib/gardener-node-agent/config-v1.110.0.yaml"');
    expect(script).toContain(
      "systemctl enable 'gardener-node-init.service' && systemctl restart --no-block 'gardener-node-init.service'\n",
    );

    // Run the placeholder part of the script (guard to the last placeholder line) against a sandbox root.
    const lines = script.split("\n");
    const last = lines.findLastIndex((l) => l.includes("machine-name"));
    const part = lines
      .slice(5, last + 1)
      .join("\n")
      .replaceAll("/var/lib/cloud/instance/user-data.txt", join(dir, "user-data.txt"))
      .replaceAll("/var/lib/gardener-node-agent", `${dir}/root/var/lib/gardener-node-agent`);
    const run = Bun.spawnSync(["bash", "-euc", part]);
    expect(run.stderr.toString()).toBe("");
    expect(run.exitCode).toBe(0);
    expect(await readFile(join(dir, "root/var/lib/gardener-node-agent/credentials/bootstrap-token"), "utf8")).toBe(`${token}\n`);
    expect(await readFile(join(dir, "root/var/lib/gardener-node-agent/machine-name"), "utf8")).toBe(`${machine}\n`);
    expect((await stat(join(dir, "root/var/lib/gardener-node-agent/machine-name"))).mode & 0o777).toBe(0o640);

    // Other user data (e.g. a text form left in place) is refused, not read as placeholders.
    await writeFile(join(dir, "user-data.txt"), "#cloud-config\n");
    const refused = Bun.spawnSync(["bash", "-euc", part]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr.toString()).toContain("not this gzip user data");
  });

  test("writes cosign.pub and keeps init.sh's signature check with --cosign-key", async () => {
    await writeFile(join(dir, "ca.crt"), "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    const key = Bun.spawnSync([
      "sh",
      "-c",
      "openssl ecparam -name prime256v1 -genkey -noout | openssl ec -pubout 2>/dev/null",
    ]).stdout.toString();
    await writeFile(join(dir, "cosign.pub"), key);
    const withKey = cliBytes(...productionFlags, "--format=gzip", "--cosign-key=cosign.pub");
    expect(withKey.exitCode).toBe(0);
    const script = gunzipSync(withKey.stdout).toString();
    expect(script).toContain(`cat > "/var/lib/gardener-node-agent/cosign.pub" << 'EOF'\n${key}EOF\nchmod 0644`);
    expect(script).toContain('if [ -f "$K" ]; then');
    const without = gunzipSync(cliBytes(...productionFlags, "--format=gzip").stdout).toString();
    expect(without).not.toContain('cosign.pub" <<');
    expect(without).toContain('[ ! -f "$K" ] || die');

    await writeFile(join(dir, "bad.pub"), "not a key\n");
    const bad = cliBytes(...productionFlags, "--cosign-key=bad.pub");
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr.toString()).toContain("cosignPublicKey: the cosign key is not one PEM public key");
    expect(bad.stderr.toString()).not.toContain("not a key");
  });

  test("fails with a usage error when --provision lacks a value", () => {
    const out = cli("--provision", "--server=https://x");
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("--provision needs --ca-file");
  });
});
