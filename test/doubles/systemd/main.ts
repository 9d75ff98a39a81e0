import { parseArgs } from "node:util";
import { startSystemdDouble } from "./double.ts";

/**
 * Standalone systemd double for `make demo` and shell tests:
 *   bun run test/doubles/systemd/main.ts [--socket PATH]
 * prints {"address": "..."} as its first line, then one JSON line per recorded action; SIGTERM/SIGINT stop it.
 */
const { values } = parseArgs({ options: { socket: { type: "string" } }, strict: true });
const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

const double = await startSystemdDouble({
  ...(values.socket ? { socketPath: values.socket } : {}),
  onAction: (a) => print(a),
});
print({ address: double.address, socketPath: double.socketPath });

const stop = async () => {
  await double.stop();
  process.exit(0);
};
process.once("SIGTERM", () => void stop());
process.once("SIGINT", () => void stop());
