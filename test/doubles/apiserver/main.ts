/**
 * Standalone simulator for shell and VM end-to-end runs:
 *   bun run test/doubles/apiserver/main.ts --port 6443 --bind 127.0.0.1 --san 10.0.2.100 --state-dir DIR [--control-port N]
 * Prints one JSON line {url, port, caFile, adminToken, controlUrl, stateDir, pid} and runs until SIGTERM/SIGINT.
 */
import { parseArgs } from "node:util";
import { startApiServer } from "./server.ts";
import { startControlServer } from "./control.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    port: { type: "string", default: "6443" },
    bind: { type: "string", default: "127.0.0.1" },
    san: { type: "string", multiple: true, default: [] },
    "state-dir": { type: "string" },
    "control-port": { type: "string", default: "0" },
    "admin-token": { type: "string" },
    "watch-history": { type: "string" },
    "bookmark-interval-ms": { type: "string" },
    "min-request-timeout": { type: "string" },
    "anonymous-auth": { type: "boolean", default: false },
  },
});

const num = (s: string | undefined): number | undefined => (s === undefined ? undefined : Number(s));
const opts = Object.fromEntries(
  Object.entries({
    port: num(values.port),
    hostname: values.bind,
    extraSans: values.san,
    stateDir: values["state-dir"],
    adminToken: values["admin-token"],
    watchHistory: num(values["watch-history"]),
    bookmarkIntervalMs: num(values["bookmark-interval-ms"]),
    minRequestTimeoutSec: num(values["min-request-timeout"]),
    anonymousAuth: values["anonymous-auth"],
  }).filter(([, x]) => x !== undefined),
);

const sim = await startApiServer(opts);
const control = startControlServer(sim, Number(values["control-port"]));
process.stdout.write(
  `${JSON.stringify({ url: sim.url, port: sim.port, caFile: sim.caFile, adminToken: sim.adminToken, controlUrl: control.url, stateDir: sim.pki.dir, pid: process.pid })}\n`,
);

const shutdown = () => {
  void Promise.all([control.stop(), sim.stop()]).then(() => process.exit(0));
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
