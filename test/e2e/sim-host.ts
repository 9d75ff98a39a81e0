// Runs the API server simulator (test/doubles/apiserver) as a process for the VM e2e and adds a small plain-HTTP
// control API on 127.0.0.1 for what only a test can do: register a bootstrap token, map a Machine to its Node,
// grant Secrets, approve + sign CSRs. Prints one JSON line: {url, caFile, adminToken, controlUrl}.
//   bun run test/e2e/sim-host.ts --port P --bind 127.0.0.1 --san 10.0.2.100 --state-dir DIR
import { parseArgs } from "node:util";
import * as v from "valibot";
import { startApiServer, type ApiServerSim } from "../doubles/apiserver/index.ts";

const Control = v.variant("op", [
  v.object({ op: v.literal("bootstrap-token"), id: v.string(), secret: v.string() }),
  v.object({ op: v.literal("machine-node"), machine: v.string(), node: v.string() }),
  v.object({ op: v.literal("allow-secret"), machine: v.string(), secret: v.string() }),
  v.object({ op: v.literal("approve-sign-csr"), name: v.string() }),
]);
export type ControlRequest = v.InferInput<typeof Control>;

async function control(sim: ApiServerSim, body: unknown): Promise<unknown> {
  const req = v.parse(Control, body);
  switch (req.op) {
    case "bootstrap-token":
      return { token: sim.addBootstrapToken(req.id, req.secret, { extraGroups: [] }) };
    case "machine-node":
      sim.setMachineNode(req.machine, req.node);
      return {};
    case "allow-secret":
      sim.allowSecret(req.machine, req.secret);
      return {};
    case "approve-sign-csr":
      sim.approveCsr(req.name);
      return { certificate: await sim.signCsr(req.name) };
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string" },
      bind: { type: "string" },
      san: { type: "string", multiple: true },
      "state-dir": { type: "string" },
    },
  });
  const sim = await startApiServer({
    port: Number(values.port ?? 0),
    hostname: values.bind ?? "127.0.0.1",
    extraSans: values.san ?? [],
    ...(values["state-dir"] === undefined ? {} : { stateDir: values["state-dir"] }),
  });
  const ctl = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      try {
        return Response.json(await control(sim, await req.json()));
      } catch (err) {
        return Response.json({ error: err instanceof Error ? err.message : String(err) }, { status: 400 });
      }
    },
  });
  const stop = async (): Promise<void> => {
    // The request log goes to stderr (apiserver.log): who asked for what, for troubleshooting a failed step.
    for (const r of sim.requests) {
      process.stderr.write(
        `${new Date(r.time).toISOString()} ${r.code} ${r.method} ${r.path} user=${r.user}${r.watch ? " (watch)" : ""}\n`,
      );
    }
    await ctl.stop(true);
    await sim.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
  console.log(JSON.stringify({ url: sim.url, caFile: sim.caFile, adminToken: sim.adminToken, controlUrl: `http://127.0.0.1:${ctl.port}` }));
}

await main();
