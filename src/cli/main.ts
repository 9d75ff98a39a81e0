import { programName, revision, version } from "../version/index.ts";
import { runCli } from "./cli.ts";

/** Why the process is stopping: the signal that asked for it. */
export class ShutdownSignal extends Error {
  override readonly name = "ShutdownSignal";
  constructor(readonly signal: string) {
    super(`received ${signal}`);
  }
}

/** The process entry: the only place that touches argv, env, signals and the exit code. */
const main = async (): Promise<void> => {
  const controller = new AbortController();
  let received = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    received++;
    // A second signal means "now": skip the graceful path.
    if (received > 1) process.exit(1);
    controller.abort(new ShutdownSignal(sig));
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  const code = await runCli(process.argv.slice(2), {
    stdout: { write: (s) => void process.stdout.write(s) },
    stderr: { write: (s) => void process.stderr.write(s) },
    env: { ...process.env },
    signal: controller.signal,
    program: programName,
    version,
    revision,
  });
  process.off("SIGTERM", onSignal);
  process.off("SIGINT", onSignal);
  // Let stdout/stderr drain; exit anyway if some handle would keep the process alive.
  process.exitCode = code;
  setTimeout(() => process.exit(code), 250).unref();
};

await main();
