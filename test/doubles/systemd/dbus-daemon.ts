import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** A private dbus-daemon listening on one unix socket, with a policy that allows everything. */
export interface DbusDaemon {
  /** The address clients connect to, as printed by the daemon (unix:path=…,guid=…). */
  readonly address: string;
  readonly pid: number;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 10_000;

function config(socketPath: string): string {
  return `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=${socketPath}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
`;
}

/** Starts dbus-daemon on `socketPath` (replacing a stale socket file); its config goes into `dir`. */
export async function startDbusDaemon(socketPath: string, dir: string): Promise<DbusDaemon> {
  const configPath = join(dir, "bus.conf");
  writeFileSync(configPath, config(socketPath));
  // A daemon that was killed leaves its socket file behind, and a new one refuses to bind over it.
  rmSync(socketPath, { force: true });
  const proc = Bun.spawn(["dbus-daemon", `--config-file=${configPath}`, "--nofork", "--print-address"], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let address: string;
  try {
    address = await readFirstLine(proc.stdout, AbortSignal.timeout(START_TIMEOUT_MS));
  } catch (err) {
    proc.kill("SIGKILL");
    await proc.exited;
    const stderr = await new Response(proc.stderr).text();
    throw new Error(`dbus-daemon did not start: ${stderr.trim() || String(err)}`, { cause: err });
  }
  return {
    address,
    pid: proc.pid,
    async stop() {
      proc.kill("SIGKILL");
      await proc.exited;
      rmSync(socketPath, { force: true });
    },
  };
}

async function readFirstLine(stream: ReadableStream<Uint8Array>, signal: AbortSignal): Promise<string> {
  const reader = stream.getReader();
  const onAbort = () => void reader.cancel(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("dbus-daemon exited before printing its address");
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    reader.releaseLock();
  }
  return text.slice(0, text.indexOf("\n")).trim();
}
