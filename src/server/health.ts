import { errorText } from "../log/index.ts";
/** A health check: resolves when healthy, throws (with a reason) when not. */
export type HealthCheck = () => void | Promise<void>;

export interface CheckResult {
  readonly name: string;
  readonly ok: boolean;
  readonly reason?: string;
}

export interface CheckReport {
  readonly ok: boolean;
  readonly results: readonly CheckResult[];
}

export class DuplicateCheckError extends Error {
  override readonly name = "DuplicateCheckError";
  constructor(readonly check: string) {
    super(`health check ${check} is already registered`);
  }
}

/**
 * Named healthz/readyz checks, like controller-runtime's manager. healthz always has `ping`; readyz
 * starts empty — the run command adds a check that passes once it has marked itself ready.
 */
export class HealthChecks {
  private readonly healthz = new Map<string, HealthCheck>([["ping", () => {}]]);
  private readonly readyz = new Map<string, HealthCheck>();

  addHealthzCheck(name: string, check: HealthCheck): void {
    HealthChecks.add(this.healthz, name, check);
  }

  addReadyzCheck(name: string, check: HealthCheck): void {
    HealthChecks.add(this.readyz, name, check);
  }

  run(kind: "healthz" | "readyz", only?: string): Promise<CheckReport | undefined> {
    return HealthChecks.runAll(kind === "healthz" ? this.healthz : this.readyz, only);
  }

  private static add(checks: Map<string, HealthCheck>, name: string, check: HealthCheck): void {
    if (checks.has(name)) throw new DuplicateCheckError(name);
    checks.set(name, check);
  }

  /** Undefined when `only` names no check. */
  private static async runAll(checks: Map<string, HealthCheck>, only?: string): Promise<CheckReport | undefined> {
    const selected = [...checks].filter(([name]) => only === undefined || name === only);
    if (only !== undefined && selected.length === 0) return undefined;
    const results = await Promise.all(
      selected.map(async ([name, check]): Promise<CheckResult> => {
        try {
          await check();
          return { name, ok: true };
        } catch (err) {
          // A failing check is the answer being asked for, not an error of the server.
          return { name, ok: false, reason: errorText(err) };
        }
      }),
    );
    return { ok: results.every((r) => r.ok), results };
  }
}

/** controller-runtime's body: `ok`, or the verbose list with reasons withheld. */
export const reportBody = (kind: string, report: CheckReport, verbose: boolean): string => {
  if (report.ok && !verbose) return "ok";
  const lines = report.results.map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`));
  lines.push(report.ok ? `${kind} check passed` : `${kind} check failed`);
  return `${lines.join("\n")}\n`;
};
