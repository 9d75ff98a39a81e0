// Host side of the real-VM e2e (driven by test/e2e/run.sh):
//   bun run test/e2e/scenario.ts prepare --work DIR --api-info FILE …   fixtures in the simulator, user-data, meta-data
//   bun run test/e2e/scenario.ts verify --work DIR --qemu-pid PID       steps 0-8, PASS/FAIL per step, exit code
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import * as v from "valibot";
import { createCluster } from "./lib/cluster-sim.ts";
import { ApiInfo, RunContext } from "./lib/context.ts";
import { Guest } from "./lib/guest.ts";
import { reconcileOsc, oscSecret, type ScenarioIdentity } from "./lib/osc.ts";
import { provisionUserData, substitutePlaceholders } from "./lib/provision.ts";
import { runSteps } from "./lib/report.ts";
import { bootStep, bootstrapStep, dataDiskStep, type StepDeps } from "./lib/steps-boot.ts";
import { applyStep, changeStep, csrStep, oscPusher } from "./lib/steps-cluster.ts";
import { driftRepairStep } from "./lib/steps-heal.ts";
import { killStep, nodeTokenLeaseStep } from "./lib/steps-runtime.ts";
import { harnessCloudConfig, metaData, multipartUserData, networkConfig, pipelineProbeScript } from "./lib/user-data.ts";
import { collectDiagnostics } from "./lib/diagnostics.ts";

const KUBERNETES_VERSION = "1.33.0";
const DATA_DISK_BYTES = 2 * 1024 * 1024 * 1024; // run.sh: truncate -s 2G

const randomId = (alphabet: string, n: number): string => Array.from(randomBytes(n), (b) => alphabet[b % alphabet.length]).join("");

function agentVersion(binary: string): string {
  try {
    const res = Bun.spawnSync([binary, "--version"], { stderr: "pipe" });
    const last = res.stdout.toString().trim().split(/\s+/).pop();
    if (res.exitCode === 0 && last) return last;
  } catch {
    // Not built yet: the provision part reports it; the version only names the config file.
  }
  return "v0.0.0-unknown";
}

/** The first line the API server process printed. */
const readApiInfo = (file: string): ApiInfo => v.parse(ApiInfo, JSON.parse(readFileSync(file, "utf8").split("\n")[0] ?? ""));

function identityOf(ctx: RunContext): ScenarioIdentity {
  return {
    agentVersion: ctx.agentVersion,
    apiServerUrl: ctx.guestApiUrl,
    caPem: readFileSync(ctx.caFile, "utf8"),
    oscSecretName: ctx.oscSecretName,
    kubernetesVersion: ctx.kubernetesVersion,
    tokenSecretName: ctx.tokenSecretName,
    tokenPath: ctx.tokenPath,
  };
}

async function prepare(args: Record<string, string | undefined>, signal: AbortSignal): Promise<void> {
  const need = (k: string): string => {
    const val = args[k];
    if (val === undefined) throw new Error(`--${k} is required`);
    return val;
  };
  const work = need("work");
  const info = readApiInfo(need("api-info"));
  const hostname = need("hostname");
  const token = { id: randomId("abcdefghijklmnopqrstuvwxyz0123456789", 6), secret: randomId("abcdefghijklmnopqrstuvwxyz0123456789", 16) };
  let ctx: RunContext = {
    work,
    repo: need("repo"),
    apiUrl: info.url,
    caFile: info.caFile,
    adminToken: info.adminToken,
    guestApiUrl: `https://${need("guest-api")}`,
    guestRegistry: need("guest-registry"),
    registryHost: need("registry-host"),
    digest: args["digest"] ?? "",
    agentVersion: agentVersion(need("agent-binary")),
    hostname,
    nodeName: hostname,
    machineName: `shoot--e2e--pool-e2e-${randomId("abcdefghijklmnopqrstuvwxyz0123456789", 5)}`,
    oscSecretName: `gardener-node-agent-e2e-${randomBytes(8).toString("hex")}`,
    kubernetesVersion: KUBERNETES_VERSION,
    tokenSecretName: "gardener-valitail",
    tokenPath: "/var/lib/valitail/auth-token",
    tokenValue: `e2e-token-${randomBytes(12).toString("hex")}`,
  };
  const identity = identityOf(ctx);
  const provision = provisionUserData({
    agentBinary: need("agent-binary"),
    imageRef: `${ctx.guestRegistry}/gardener-node-agent@${ctx.digest}`,
    apiServerUrl: ctx.guestApiUrl,
    caFile: ctx.caFile,
    oscSecretName: ctx.oscSecretName,
    kubernetesVersion: ctx.kubernetesVersion,
    kubeletDataVolumeSize: DATA_DISK_BYTES,
  });

  let script: string;
  if ("script" in provision) {
    script = substitutePlaceholders(provision.script, `${token.id}.${token.secret}`, ctx.machineName);
  } else {
    ctx = { ...ctx, provisionMissing: provision.missing };
    script = pipelineProbeScript({ apiServerUrl: ctx.guestApiUrl, registryUrl: `http://${ctx.guestRegistry}`, caPem: identity.caPem });
  }
  const b64 = (s: string): string => Buffer.from(s).toString("base64");
  await createCluster(info).setup(
    {
      bootstrapToken: token,
      machineName: ctx.machineName,
      nodeName: ctx.nodeName,
      hostname: ctx.hostname,
      oscSecret: oscSecret(identity, reconcileOsc(identity, 1)),
      tokenSecret: {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: ctx.tokenSecretName, namespace: "kube-system" },
        data: { token: b64(ctx.tokenValue) },
      },
    },
    signal,
  );
  writeFileSync(join(work, "user-data"), multipartUserData(harnessCloudConfig(), script));
  writeFileSync(join(work, "network-config"), networkConfig());
  writeFileSync(join(work, "meta-data"), metaData(`gna-e2e-${randomBytes(4).toString("hex")}`, hostname));
  writeFileSync(join(work, "context.json"), `${JSON.stringify(ctx, null, 2)}\n`);
  console.log(
    `[e2e] prepared: agent ${ctx.agentVersion}, machine ${ctx.machineName}, OSC secret ${ctx.oscSecretName}${ctx.provisionMissing ? `, provision user data missing: ${ctx.provisionMissing}` : ""}`,
  );
}

async function verify(args: Record<string, string | undefined>, signal: AbortSignal): Promise<number> {
  const work = args["work"] ?? "";
  const ctx = v.parse(RunContext, JSON.parse(readFileSync(join(work, "context.json"), "utf8")));
  const qemuPid = Number(args["qemu-pid"]);
  const scale = Number(process.env["GNA_E2E_STEP_TIMEOUT_SCALE"] ?? "1") || 1;
  const info = readApiInfo(join(work, "apiserver.json"));
  const deps: StepDeps = {
    ctx,
    guest: new Guest(join(work, "share")),
    cluster: createCluster(info),
    qemuAlive: () => {
      try {
        process.kill(qemuPid, 0);
        return true;
      } catch {
        return false;
      }
    },
    scale,
  };
  const o = oscPusher(deps, identityOf(ctx));
  const steps = [
    bootStep(deps),
    bootstrapStep(deps),
    dataDiskStep(deps),
    csrStep(deps),
    applyStep(deps, o),
    changeStep(deps, o),
    nodeTokenLeaseStep(deps),
    killStep(deps, o),
    driftRepairStep(deps),
  ];
  const start = performance.now();
  const outcomes = await runSteps(steps, signal, (line) => console.log(line));
  const failed = outcomes.filter((x) => !x.passed);
  if (failed.length > 0 && outcomes[0]?.passed) await collectDiagnostics(deps, signal);
  const seconds = Math.round((performance.now() - start) / 1000);
  console.log(
    `${failed.length === 0 ? "PASS" : "FAIL"}: ${outcomes.length - failed.length}/${outcomes.length} steps passed in ${seconds} s after qemu start${failed.length ? ` (failed: ${failed.map((x) => x.n).join(", ")})` : ""}`,
  );
  return failed.length === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: Object.fromEntries(
      ["work", "repo", "api-info", "registry-host", "guest-api", "guest-registry", "digest", "agent-binary", "hostname", "qemu-pid"].map(
        (k) => [k, { type: "string" as const }],
      ),
    ),
  });
  const controller = new AbortController();
  process.on("SIGTERM", () => controller.abort());
  process.on("SIGINT", () => controller.abort());
  const args = values as Record<string, string | undefined>;
  switch (positionals[0]) {
    case "prepare":
      await prepare(args, controller.signal);
      return 0;
    case "verify":
      return verify(args, controller.signal);
    default:
      console.error("usage: scenario.ts prepare|verify --work DIR …");
      return 2;
  }
}

process.exit(await main());
