import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { startApiServer } from "../doubles/apiserver/index.ts";
import type { ApiServerSim } from "../doubles/apiserver/index.ts";
import { startSystemdDouble } from "../doubles/systemd/index.ts";
import type { SystemdDouble } from "../doubles/systemd/index.ts";
import { eventually } from "../harness/eventually.ts";
import { reservePort } from "../harness/ports.ts";

// Whole-binary tests of the compiled executable (`make build`); GNA_BINARY points at another build.
const binary = resolve(process.env["GNA_BINARY"] ?? "dist/gardener-node-agent");
const configDir = "/var/lib/gardener-node-agent";
const validConfig = (healthPort: number, metricsPort: number, extra = "") =>
  `apiVersion: nodeagent.config.gardener.cloud/v1alpha1
kind: NodeAgentConfiguration
logFormat: json
controllers:
  operatingSystemConfig: {secretName: osc-secret, kubernetesVersion: v1.33.0}
server:
  healthProbes: {bindAddress: 127.0.0.1, port: ${healthPort}}
  metrics: {bindAddress: 127.0.0.1, port: ${metricsPort}}
${extra}`;

interface Collected {
  (): string;
  /** Resolves when the stream has ended. */
  done: Promise<void>;
}

interface Running {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  stdout: Collected;
  stderr: Collected;
}

const running: Running[] = [];
const dirs: string[] = [];
let version = "";
setDefaultTimeout(20_000);

// The run command needs an API server (identity, node discovery, caches) and a system bus.
let sim: ApiServerSim;
let systemd: SystemdDouble;

const collect = (stream: ReadableStream<Uint8Array>): Collected => {
  let text = "";
  const done = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  })();
  return Object.assign(() => text, { done });
};

const start = (args: string[], env: Record<string, string> = {}): Running => {
  const proc = Bun.spawn([binary, ...args], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: {
      PATH: process.env["PATH"] ?? "",
      DBUS_SYSTEM_BUS_ADDRESS: systemd.address,
      GARDENER_NODE_AGENT_HOSTNAME: "worker-a",
      ...env,
    },
  });
  const r = { proc, stdout: collect(proc.stdout), stderr: collect(proc.stderr) };
  running.push(r);
  return r;
};

/** Runs to completion; returns exit code and output. */
const run = async (args: string[], env: Record<string, string> = {}) => {
  const r = start(args, env);
  const code = await r.proc.exited;
  await Promise.all([r.stdout.done, r.stderr.done]);
  return { code, stdout: r.stdout(), stderr: r.stderr() };
};

/** Polls /readyz until 200; fails at once with the agent's last output when it exits instead. */
const untilReady = (r: Running, port: number): Promise<true> =>
  eventually("readyz", async () => {
    if (r.proc.exitCode !== null) {
      throw new Error(`agent exited with ${r.proc.exitCode}: ${r.stdout().trim().split("\n").at(-1) ?? ""} ${r.stderr()}`);
    }
    return (await get(`http://127.0.0.1:${port}/readyz`))?.status === 200 ? true : undefined;
  });

const tempRoot = (files: Record<string, string> = {}): string => {
  const root = mkdtempSync(join(tmpdir(), "gna-cli-"));
  dirs.push(root);
  mkdirSync(join(root, configDir, "credentials"), { recursive: true });
  writeFileSync(join(root, configDir, "credentials/kubeconfig"), sim.kubeconfig({ token: sim.adminToken }));
  writeFileSync(join(root, configDir, "machine-name"), "machine-a\n");
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, configDir, name), text);
  return root;
};

const get = async (url: string): Promise<{ status: number; body: string } | undefined> => {
  try {
    const res = await fetch(url);
    return { status: res.status, body: await res.text() };
  } catch (err) {
    // Not listening yet.
    if (err instanceof Error) return undefined;
    throw err;
  }
};

const stopAndWait = async (r: Running): Promise<number> => {
  r.proc.kill("SIGTERM");
  const code = await Promise.race([r.proc.exited, Bun.sleep(5_000).then(() => "still running after 5 s" as const)]);
  if (typeof code === "string") throw new Error(code);
  return code;
};

beforeAll(async () => {
  if (!existsSync(binary)) throw new Error(`${binary} is missing: run make build first`);
  sim = await startApiServer();
  systemd = await startSystemdDouble();
  const out = await run(["--version"]);
  version = out.stdout.trim().replace(/^gardener-node-agent /, "");
});

afterEach(() => {
  for (const r of running.splice(0)) if (r.proc.exitCode === null) r.proc.kill("SIGKILL");
});

afterAll(async () => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  await Promise.all([sim?.stop(), systemd?.stop()]);
});

describe("gardener-node-agent binary", () => {
  test("prints its name and version with --version", async () => {
    const out = await run(["--version"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^gardener-node-agent v\S+\n$/);
  });

  test.each([[[]], [["bootstrap"]], [["reset"]], [["render"]], [["apply"]], [["install"]]])(
    "prints help for %p and exits 0",
    async (cmd) => {
      const out = await run([...cmd, "--help"]);
      expect(out.code).toBe(0);
      expect(out.stdout).toContain(`Usage:\n  gardener-node-agent${cmd.length === 0 ? "" : ` ${cmd[0]}`} [flags]`);
      expect(out.stdout).toContain("--config-dir string");
      expect(out.stderr).toBe("");
    },
  );

  test("lists reset among the commands and describes it", async () => {
    const top = await run(["--help"]);
    expect(top.stdout).toContain("\n  reset        Remove gardener-node-agent's artefacts from this node\n");
    const reset = await run(["reset", "--help"]);
    expect(reset.stdout).toContain("stops and removes every pod sandbox through the CRI");
  });

  test("accepts -h as help", async () => {
    const out = await run(["bootstrap", "-h"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("gardener-node-agent bootstrap [flags]");
  });

  test.each<[string[], string]>([
    [["--foo"], "error: unknown flag --foo (see 'gardener-node-agent --help')\n"],
    [["bootstrap", "--foo=1"], "error: unknown flag --foo (see 'gardener-node-agent bootstrap --help')\n"],
    [["nope"], 'error: unknown command "nope" for "gardener-node-agent" (see \'gardener-node-agent --help\')\n'],
    [["bootstrap", "extra"], "error: unexpected argument \"extra\" (see 'gardener-node-agent bootstrap --help')\n"],
    [["--config-dir"], "error: flag needs an argument: --config-dir (see 'gardener-node-agent --help')\n"],
  ])("rejects %p with one line on stderr and exit code 2", async (args, line) => {
    const out = await run(args);
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(line);
    expect(out.stdout).toBe("");
  });

  test("names the missing config file and exits 1", async () => {
    const root = tempRoot();
    const out = await run(["--root", root]);
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(`error: error reading config file: ${configDir}/config-${version}.yaml: no such file or directory\n`);
  });

  test("names the file and field path of an invalid config and exits 1 without a stack", async () => {
    const root = tempRoot({ [`config-${version}.yaml`]: validConfig(1, 2, "clientConnection: {burst: -1}\n") });
    const out = await run([`--root=${root}`, "--config-dir", configDir]);
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(
      `error: invalid config: ${configDir}/config-${version}.yaml: clientConnection.burst: Invalid value: must be non-negative\n`,
    );
  });

  test("reports an unsupported Kubernetes version unless the check is disabled", async () => {
    const health = reservePort();
    const root = tempRoot({ [`config-${version}.yaml`]: validConfig(health, reservePort()).replace("v1.33.0", "1.31.0") });
    const refused = await run(["--root", root]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "controllers.operatingSystemConfig.kubernetesVersion: Invalid value: unsupported kubernetes version, supported minors: 1.32,",
    );
    const r = start(["--root", root], { EXPERIMENTAL_DISABLE_KUBERNETES_VERSION_CHECK: "true" });
    await untilReady(r, health);
    expect(await stopAndWait(r)).toBe(0);
  });

  test("serves healthz, readyz and metrics on the configured ports and exits 0 on SIGTERM", async () => {
    const [health, metrics] = [reservePort(), reservePort()];
    const root = tempRoot({ [`config-${version}.yaml`]: validConfig(health, metrics) });
    const r = start(["--root", root]);
    await untilReady(r, health);
    expect(await get(`http://127.0.0.1:${health}/readyz`)).toEqual({ status: 200, body: "ok" });
    expect(await get(`http://127.0.0.1:${health}/healthz`)).toEqual({ status: 200, body: "ok" });
    const scrape = await get(`http://127.0.0.1:${metrics}/metrics`);
    expect(scrape?.status).toBe(200);
    expect(scrape?.body).toContain(`gardener_node_agent_build_info{version="${version}",revision=`);
    expect(scrape?.body).toMatch(/^process_resident_memory_bytes \d+$/m);
    expect(await stopAndWait(r)).toBe(0);
    await r.stdout.done;
    const lines = r
      .stdout()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ level: "info", logger: "gardener-node-agent", msg: "Starting gardener-node-agent", version });
    expect(lines.map((l) => l["msg"])).toContain(`FLAG: --root=${JSON.stringify(root)}`);
    expect(lines.at(-1)).toMatchObject({ msg: "Stopped gardener-node-agent" });
  });

  test("serves on :2751 and :2752 with the default config", async () => {
    const root = tempRoot({
      [`config-${version}.yaml`]: "controllers: {operatingSystemConfig: {secretName: s, kubernetesVersion: 1.34.0}}\n",
    });
    const r = start(["--root", root]);
    await untilReady(r, 2751);
    expect((await get("http://127.0.0.1:2752/metrics"))?.status).toBe(200);
    expect(await stopAndWait(r)).toBe(0);
  });

  test("falls back to the only config file and warns naming it", async () => {
    const health = reservePort();
    const root = tempRoot({ "config-v0.0.1-other.yaml": validConfig(health, reservePort()) });
    const r = start(["--root", root, "--log-format=text"]);
    await untilReady(r, health);
    expect(await stopAndWait(r)).toBe(0);
    await r.stdout.done;
    expect(r.stdout()).toContain(
      `WARN\tgardener-node-agent\tConfig file config-${version}.yaml not found, using the only candidate ${configDir}/config-v0.0.1-other.yaml`,
    );
  });

  test("refuses several config candidates when none matches, listing them", async () => {
    const root = tempRoot({ "config-a.yaml": "", "config-b.yaml": "" });
    const out = await run(["--root", root]);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("(candidates: config-a.yaml, config-b.yaml;");
  });

  test("sends READY=1 to NOTIFY_SOCKET once serving and STOPPING=1 on SIGTERM", async () => {
    const health = reservePort();
    const root = tempRoot({ [`config-${version}.yaml`]: validConfig(health, reservePort()) });
    const sock = join(root, "notify.sock");
    const socat = Bun.spawn(["socat", "-u", `UNIX-RECV:${sock}`, "STDOUT"], { stdout: "pipe", stderr: "ignore" });
    const received = collect(socat.stdout);
    running.push({ proc: socat as unknown as Running["proc"], stdout: received, stderr: received });
    await eventually("the notify socket", () => (existsSync(sock) ? true : undefined));
    const r = start(["--root", root], { NOTIFY_SOCKET: sock, WATCHDOG_USEC: "200000" });
    await eventually("READY=1", () => {
      if (r.proc.exitCode !== null) throw new Error(`agent exited with ${r.proc.exitCode}: ${r.stdout().trim().split("\n").at(-1) ?? ""}`);
      return received().includes("READY=1") ? true : undefined;
    });
    expect((await get(`http://127.0.0.1:${health}/readyz`))?.status).toBe(200);
    await eventually("a watchdog ping", () => (received().includes("WATCHDOG=1") ? true : undefined));
    expect(await stopAndWait(r)).toBe(0);
    await eventually("STOPPING=1", () => (received().includes("STOPPING=1") ? true : undefined));
    expect(received()).toStartWith("READY=1");
  });
});
