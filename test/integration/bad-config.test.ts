import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { reservePort } from "../harness/ports.ts";

// Whole-binary tests (`make build`): a bad config or kubeconfig stops the process at once, exit 1,
// naming the file and the field, never quoting the content.
const binary = resolve(process.env["GNA_BINARY"] ?? "dist/gardener-node-agent");
const configDir = "/var/lib/gardener-node-agent";
/** A process that has not exited by then hangs (a FIFO read blocks for ever). */
const hangMs = 5_000;
setDefaultTimeout(20_000);

/** Looks like a credential: must never be printed. */
const secret = "c2VjcmV0LXRva2VuLTk4NzY1NDMyMTA";
const good = "controllers:\n  operatingSystemConfig: {secretName: osc, kubernetesVersion: v1.33.0}\n";
const bindAddressForm = "must be empty, an IP address (e.g. 0.0.0.0, 127.0.0.1, ::) or a host name whose last label starts with a letter";

/** `levels` anchors, each a list of `width` aliases of the one before: width^levels nodes once expanded. */
const aliasBomb = (levels: number, width: number): string => {
  let text = `l0: &l0 [${Array(width).fill("x").join(", ")}]\n`;
  for (let i = 1; i <= levels; i++)
    text += `l${i}: &l${i} [${Array(width)
      .fill(`*l${i - 1}`)
      .join(", ")}]\n`;
  return text;
};

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

let cachedVersion: string | undefined;
const version = (): string => (cachedVersion ??= execFileSync(binary, ["--version"], { encoding: "utf8" }).trim().split(" ")[1] ?? "");

/** A root with the config dir; `setup` gets the real path of the config file to create. */
function machine(setup: (configFile: string, dir: string) => void): string {
  const root = mkdtempSync(join(tmpdir(), "gna-bad-config-"));
  roots.push(root);
  const dir = join(root, configDir);
  mkdirSync(join(dir, "credentials"), { recursive: true });
  setup(join(dir, `config-${version()}.yaml`), dir);
  return root;
}

/** Runs the agent against `root`; kills it if it has not exited after `hangMs`. */
async function runAgent(root: string, env: Record<string, string> = {}): Promise<{ code: number | null; output: string; ms: number }> {
  const started = performance.now();
  const proc = Bun.spawn([binary, `--root=${root}`, `--config-dir=${configDir}`], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    // No system bus and no API server: a config that passes would fail later, differently.
    env: { PATH: process.env["PATH"] ?? "", DBUS_SYSTEM_BUS_ADDRESS: "unix:path=/nonexistent", ...env },
  });
  const killer = setTimeout(() => proc.kill("SIGKILL"), hangMs);
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  clearTimeout(killer);
  return { code: proc.signalCode === "SIGKILL" ? null : code, output: stdout + stderr, ms: performance.now() - started };
}

describe("agent with a bad config", () => {
  test.each([
    [
      "a number for a string",
      good.replace("secretName: osc", "secretName: 12345"),
      "controllers.operatingSystemConfig.secretName: invalid type: expected string, got number",
    ],
    ["a list for a struct", `${good}apiServer: []\n`, "apiServer: invalid type: expected mapping, got array"],
    ["a recursive alias", `${good}extra: &loop {again: *loop}\n`, "invalid YAML: a recursive alias (a node that contains itself)"],
    [
      "a bad bind address",
      `${good}server: {healthProbes: {bindAddress: "not an address"}}\n`,
      "server.healthProbes.bindAddress: Invalid value: must be empty, an IP address (e.g. 0.0.0.0, 127.0.0.1, ::) or a host name whose last label starts with a letter",
    ],
    [
      "a port out of range",
      `${good}server: {metrics: {port: 70000}}\n`,
      "server.metrics.port: Invalid value: must be between 0 and 65535, inclusive",
    ],
    [
      "a relative kubeconfig path",
      `${good}clientConnection: {kubeconfig: creds/kubeconfig}\n`,
      "clientConnection.kubeconfig: Invalid value: must be an absolute path",
    ],
    [
      "a bind address shaped like an octal number",
      `${good}server: {healthProbes: {bindAddress: "0o777"}}\n`,
      `server.healthProbes.bindAddress: Invalid value: ${bindAddressForm}`,
    ],
    [
      "a bind address shaped like an IPv4 address out of range",
      `${good}server: {metrics: {bindAddress: "999.1.1.1"}}\n`,
      `server.metrics.bindAddress: Invalid value: ${bindAddressForm}`,
    ],
    [
      "a 10,000-character logLevel",
      `${good}logLevel: ${"q".repeat(10_000)}\n`,
      'logLevel: Unsupported value: supported values: "debug", "info", "error"',
    ],
    [
      "a config nested 20,000 levels deep",
      `${good}extra: ${"[".repeat(20_000)}${"]".repeat(20_000)}\n`,
      "invalid YAML: nesting too deep to parse (at most 200 levels are accepted)",
    ],
    [
      "a config nested 20,000 levels deep in block style",
      `${good}extra:\n  ${"- ".repeat(20_000)}x\n`,
      "invalid YAML: nesting too deep to parse (at most 200 levels are accepted)",
    ],
    ["a 7-level alias bomb", `${good}${aliasBomb(7, 10)}`, "invalid YAML: an alias is unresolvable or expands too often"],
  ])("should exit 1 at once naming the file and the field for %s", async (_what, text, message) => {
    const root = machine((file) => writeFileSync(file, text));
    const r = await runAgent(root);
    expect(r.code).toBe(1);
    expect(r.output).toContain(`${configDir}/config-${version()}.yaml`);
    expect(r.output).toContain(message);
    expect(r.output).not.toContain("Maximum call stack");
    expect(r.output).not.toContain("qqqqqqqqqq"); // the long value
    expect(r.output).not.toMatch(/\n\s+at /); // no stack trace
    expect(r.ms).toBeLessThan(hangMs);
  });

  test("should name a symlink loop as such, not as a missing file", async () => {
    const root = machine((file, dir) => {
      symlinkSync("b", join(dir, "a"));
      symlinkSync("a", join(dir, "b"));
      symlinkSync("a", file);
    });
    const r = await runAgent(root);
    expect(r.code).toBe(1);
    expect(r.output).toContain("too many levels of symbolic links");
    expect(r.output).not.toContain("no such file");
  });

  test("should refuse a FIFO as config instead of waiting for a writer", async () => {
    const root = machine((file) => execFileSync("mkfifo", [file]));
    const r = await runAgent(root);
    expect(r.code).toBe(1);
    expect(r.output).toContain(`cannot read "${configDir}/config-${version()}.yaml": it is a non-regular file`);
    expect(r.ms).toBeLessThan(hangMs);
  });

  test.each([
    ["a YAML syntax error", `${good}logLevel: "${secret}\n`],
    ["a value of the wrong type", `${good}server: {metrics: {port: ${secret}}}\n`],
    ["a key the YAML package would warn about on stderr", `featureGates: {AllAlpha: false}\nextra:\n  ? [${secret}]\n  : 1\n`],
  ])("should never print the content of %s", async (_what, text) => {
    const root = machine((file) => writeFileSync(file, text));
    const r = await runAgent(root);
    expect(r.code).toBe(1);
    expect(r.output).not.toContain(secret);
  });
});

describe("commands with a bad input file", () => {
  test.each([
    ["apply --offline", (root: string, file: string) => ["apply", "--offline", `--root=${root}`, file], "OSC file"],
    ["diff --offline", (root: string, file: string) => ["diff", "--offline", `--root=${root}`, file], "OSC file"],
    ["render", (_root: string, file: string) => ["render", file], "OSC file"],
    ["render --secrets", (_root: string, file: string) => ["render", "--secrets", file, "/dev/null"], "secrets file"],
    ["install --binary", (root: string, file: string) => ["install", `--root=${root}`, `--binary=${file}`], "binary"],
  ])("%s should name a symlink loop as such, not as a missing file", async (_what, args, what) => {
    const root = machine(() => undefined);
    const file = join(root, "loop.yaml");
    symlinkSync("loop.yaml", file);
    const proc = Bun.spawnSync([binary, ...args(root, file)], { stdin: "ignore", env: { PATH: process.env["PATH"] ?? "" } });
    expect(proc.exitCode).toBe(2);
    expect(proc.stderr.toString()).toContain(`${what} ${file} is a symlink loop (too many levels of symbolic links)`);
  });
});

describe("agent with a bad environment variable", () => {
  test.each([
    ["GARDENER_NODE_AGENT_TIMINGS", `unitVerifyWindow=${secret}`, "timing unitVerifyWindow is not a duration"],
    ["GARDENER_NODE_AGENT_TIMINGS", `driftCheckPeriod=-${secret}`, "timing driftCheckPeriod is not a duration"],
    ["GARDENER_NODE_AGENT_TIMINGS", `healthyFor=${secret}`, "timing healthyFor is not a duration"],
  ])("should exit 1 at once naming %s but not its value (%p)", async (name, value, reason) => {
    const root = machine((file) => writeFileSync(file, good));
    const r = await runAgent(root, { [name]: value });
    expect(r.code).toBe(1);
    expect(r.output).toContain(`environment variable ${name}: ${reason}`);
    expect(r.output).not.toContain(secret);
    expect(r.output).not.toMatch(/\n\s+at /); // no stack trace
    expect(r.ms).toBeLessThan(hangMs);
  });
});

describe("agent with a malformed kubeconfig", () => {
  test.each<[string, string, string]>([
    ["a YAML syntax error in a flow mapping", `apiVersion: v1\nusers:\n- name: a\n  user: {token: ${secret}, x: [a}\n`, "invalid YAML: "],
    [
      "a YAML syntax error in a block mapping",
      `apiVersion: v1\nusers:\n- name: a\n  user:\n    token: ${secret}\n   bad: x\n`,
      "invalid YAML: ",
    ],
    [
      "a value of the wrong type",
      `apiVersion: v1\nclusters:\n- cluster:\n    server: https://x\n    insecure-skip-tls-verify: ${secret}\n  name: a\n`,
      "",
    ],
    ["a collection as a key", `apiVersion: v1\nclusters:\n  ? [${secret}]\n  : x\n`, ""],
    [
      "a 7-level alias bomb",
      `apiVersion: v1\n${aliasBomb(7, 10)}users:\n- name: a\n  user: {token: ${secret}}\n`,
      "invalid YAML: an alias is unresolvable or expands too often",
    ],
    [
      "nesting 20,000 levels deep",
      `apiVersion: v1\nusers:\n- name: ${secret}\n  user: ${"[".repeat(20_000)}${"]".repeat(20_000)}\n`,
      "invalid YAML: nesting too deep to parse",
    ],
  ])("should stop with exit 1 and print neither its bytes nor an unstructured warning for %s", async (_what, kubeconfig, problem) => {
    const root = machine((file, dir) => {
      // Free ports below the ephemeral range: a port in use would fail the start before the kubeconfig does.
      writeFileSync(
        file,
        `${good}server:\n  healthProbes: {bindAddress: 127.0.0.1, port: ${reservePort()}}\n  metrics: {bindAddress: 127.0.0.1, port: ${reservePort()}}\n`,
      );
      writeFileSync(join(dir, "credentials/kubeconfig"), kubeconfig);
    });
    const r = await runAgent(root);
    expect(r.code).toBe(1);
    expect(r.output).toContain(`kubeconfig /var/lib/gardener-node-agent/credentials/kubeconfig: ${problem}`);
    expect(r.output).not.toContain(secret);
    // Every line is a JSON log record: nothing printed around the logger.
    for (const line of r.output.split("\n").filter((l) => l !== "")) expect(() => JSON.parse(line)).not.toThrow();
  });
});
