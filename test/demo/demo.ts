// `make demo`: the agent's main job on an embedded default. Starts the API-server simulator and the
// systemd D-Bus double, runs the compiled agent against a sandbox root, applies a sample OSC, shows
// what it wrote and restarted, then changes one file and shows that only the dependent unit restarts.
// It ends with the operator's view: the node is held, a new version waits, and `status` and `diff`
// show what is applied and what the pending version would do.
import { agentEnv, startSandbox, type Sandbox } from "../harness/sandbox.ts";
import { sampleOsc } from "./sample-osc.ts";

const bold = (s: string) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const section = (title: string) => console.log(`\n${bold(`== ${title}`)}`);

async function showFiles(sb: Sandbox): Promise<void> {
  for (const f of await sb.listFiles()) console.log(`  ${f.mode}  ${String(f.size).padStart(5)}  ${f.path}`);
}

function showActions(sb: Sandbox): void {
  for (const a of sb.systemd.actions) {
    if (a.action === "ListByNames" || a.action === "List" || a.action === "UnitProperties") continue;
    console.log(`  ${a.action.padEnd(12)} ${a.units.join(" ")}`);
  }
}

/** Runs the agent binary's operator commands against the sandbox node, as an operator would on the node. */
async function operatorCommand(sb: Sandbox, args: readonly string[]): Promise<number> {
  const p = Bun.spawn([sb.binary, ...args, "--config-dir=/var/lib/gardener-node-agent", `--root=${sb.root}`], {
    env: agentEnv(sb.systemd.address, sb.nodeName),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  console.log(`$ gardener-node-agent ${args.join(" ")}`);
  process.stdout.write(out + err);
  console.log(`(exit code ${code})`);
  return code;
}

async function main(): Promise<number> {
  const sb = await startSandbox({ nodeName: "demo-worker" });
  const agent = sb.spawnAgent();
  try {
    section("Sandbox");
    console.log(`  API server simulator  ${sb.sim.url}`);
    console.log(`  systemd D-Bus double  ${sb.systemd.address}`);
    console.log(`  --root                ${sb.root}`);
    console.log(`  Node                  ${sb.nodeName}, OSC Secret kube-system/${sb.secretName}`);

    const first = sb.setOsc(sampleOsc({ greeting: "Hello, Gardener!" }));
    await sb.waitForApplied(first);
    section("Applied the sample OSC — files written under --root (mode, bytes, host path)");
    await showFiles(sb);
    section("systemd calls, in order (the first apply also restarts containerd.service, as upstream does)");
    showActions(sb);
    const labels = (sb.node()!["metadata"] as { labels?: Record<string, string> }).labels ?? {};
    section("Node");
    console.log(`  annotation checksum/cloud-config-data = ${first.slice(0, 16)}…`);
    console.log(`  label worker.gardener.cloud/kubernetes-version = ${labels["worker.gardener.cloud/kubernetes-version"]}`);
    const lease = await sb.sim.waitFor("leases", "kube-system", `gardener-node-agent-${sb.nodeName}`, (l) => l !== undefined, 15_000);
    const spec = (lease?.["spec"] ?? {}) as { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string };
    console.log(
      `  Lease kube-system/gardener-node-agent-${sb.nodeName}: holder ${spec.holderIdentity}, ${spec.leaseDurationSeconds}s, renewed ${spec.renewTime}`,
    );

    sb.systemd.clearActions();
    const second = sb.setOsc(sampleOsc({ greeting: "Hello again, Gardener!" }));
    await sb.waitForApplied(second);
    section("Changed /etc/demo/greeting.txt — only greeter.service (which lists it in filePaths) restarts");
    console.log(`  /etc/demo/greeting.txt now: ${(await sb.readHostFile("/etc/demo/greeting.txt")).trim()}`);
    showActions(sb);

    sb.sim.store.patch("nodes", "", sb.nodeName, "merge", {
      metadata: { annotations: { "node-agent.gardener.cloud/hold": "demo: change freeze" } },
    });
    const third = sb.setOsc(sampleOsc({ greeting: "Hello from a held version!" }));
    await sb.sim.waitFor("nodes", "", sb.nodeName, (n) => JSON.stringify(n?.["status"] ?? {}).includes('"reason":"Held"'), 15_000);
    section(`Held the Node (node-agent.gardener.cloud/hold) and published ${third.slice(0, 12)} — what an operator sees`);
    await operatorCommand(sb, ["status"]);
    console.log("");
    await operatorCommand(sb, ["diff"]);
    return 0;
  } catch (err) {
    console.error(`demo failed: ${(err as Error).message}`);
    console.error(`agent output:\n${agent.output()}`);
    return 1;
  } finally {
    const code = await agent.stop();
    section(`Agent stopped with SIGTERM, exit code ${code}`);
    await sb.stop();
  }
}

process.exit(await main());
