import { existsSync } from "node:fs";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { done, notYet, pollUntil } from "./poll.ts";

export interface GuestResult {
  readonly rc: number;
  readonly out: string;
}

class GuestCommandError extends Error {
  override readonly name = "GuestCommandError";
  constructor(
    readonly script: string,
    readonly result: GuestResult,
  ) {
    super(`guest command failed (rc ${result.rc}): ${result.out.trim().split("\n").slice(-3).join(" | ")}`);
  }
}

/**
 * Host side of the 9p exec channel (see guest.sh): a script goes in as cmd/<id>.sh, the answer comes back as
 * cmd/<id>.out and cmd/<id>.rc. Commands run one after another inside the guest, as root.
 */
export class Guest {
  private seq = 0;
  constructor(private readonly shareDir: string) {}

  /** True once guest.sh runs (cloud-init bootcmd mounted the share). */
  isReady(): boolean {
    return existsSync(join(this.shareDir, "guest-ready"));
  }

  async exec(script: string, signal: AbortSignal, timeoutMs = 120_000): Promise<GuestResult> {
    const id = `${process.pid}-${++this.seq}`;
    const base = join(this.shareDir, "cmd", id);
    await writeFile(`${base}.tmp`, `set -o pipefail\n${script}\n`);
    await rename(`${base}.tmp`, `${base}.sh`);
    try {
      const rcText = await pollUntil(
        async () => (existsSync(`${base}.rc`) ? done(await readFile(`${base}.rc`, "utf8")) : notYet("no answer yet")),
        { what: `guest command ${id}`, timeoutMs, intervalMs: 250, signal },
      );
      return { rc: Number.parseInt(rcText.trim(), 10), out: await readFile(`${base}.out`, "utf8") };
    } finally {
      await Promise.all([".sh", ".out", ".rc"].map((ext) => rm(`${base}${ext}`, { force: true })));
    }
  }

  /** Like exec, but a non-zero exit status is an error. Returns stdout+stderr. */
  async run(script: string, signal: AbortSignal, timeoutMs?: number): Promise<string> {
    const result = await this.exec(script, signal, timeoutMs);
    if (result.rc !== 0) throw new GuestCommandError(script, result);
    return result.out;
  }

  /** `systemctl show` properties of one unit as a map. */
  async unitProps(unit: string, props: readonly string[], signal: AbortSignal): Promise<Map<string, string>> {
    const out = await this.run(`systemctl show ${props.map((p) => `-p ${p}`).join(" ")} -- '${unit}'`, signal);
    return parseProps(out);
  }
}

export function parseProps(text: string): Map<string, string> {
  const props = new Map<string, string>();
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) props.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return props;
}
