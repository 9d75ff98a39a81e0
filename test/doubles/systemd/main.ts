import { parseArgs } from "node:util";
import { startSystemdDouble } from "./double.ts";

/**
 * Standalone systemd double for `make demo` and shell tests:
 *   bun run test/doubles/systemd/main.ts [--socket PATH] [--fail UNIT]… [--fail-next UNIT]… [--stall UNIT]… [--unknown UNIT]…
 *     [--crash-after-start UNIT=MS]…
 * prints {"address": "...", "socketPath": "..."} as its first line, then one JSON line per recorded action
 * ({"action":"Restart","units":["kubelet.service"]}); SIGTERM or SIGINT stop it and its dbus-daemon.
 */
const { values } = parseArgs({
  options: {
    socket: { type: "string" },
    fail: { type: "string", multiple: true, default: [] },
    "fail-next": { type: "string", multiple: true, default: [] },
    stall: { type: "string", multiple: true, default: [] },
    unknown: { type: "string", multiple: true, default: [] },
    "crash-after-start": { type: "string", multiple: true, default: [] },
  },
  strict: true,
});
const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

const double = await startSystemdDouble({
  ...(values.socket ? { socketPath: values.socket } : {}),
  onAction: (a) => print(a),
});
for (const unit of values.fail) double.failJobs(unit);
for (const unit of values["fail-next"]) double.failNextJob(unit);
for (const unit of values.stall) double.stallJobs(unit);
for (const unit of values.unknown) double.makeUnknown(unit);
for (const spec of values["crash-after-start"]) {
  const [unit = "", ms = "0"] = spec.split("=");
  double.failAfterStart(unit, Number(ms));
}
print({ address: double.address, socketPath: double.socketPath });

const stop = async () => {
  await double.stop();
  process.exit(0);
};
process.once("SIGTERM", () => void stop());
process.once("SIGINT", () => void stop());
