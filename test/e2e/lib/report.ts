/** One scenario step: a number, a title, the steps it builds on, and a check that throws with the reason. */
export interface Step {
  readonly n: number;
  readonly title: string;
  readonly needs: readonly number[];
  readonly timeoutMs: number;
  run(signal: AbortSignal): Promise<string | void>;
}

export interface StepOutcome {
  readonly n: number;
  readonly passed: boolean;
  readonly seconds: number;
}

const reasonOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Runs the steps in order and prints `PASS step N: …` / `FAIL step N: … (reason)`. A step whose prerequisite
 * failed is reported as failed without being run (it could only time out).
 */
export async function runSteps(steps: readonly Step[], signal: AbortSignal, print: (line: string) => void): Promise<StepOutcome[]> {
  const outcomes: StepOutcome[] = [];
  const failed = new Set<number>();
  for (const step of steps) {
    const start = performance.now();
    const blocker = step.needs.find((n) => failed.has(n));
    let passed = false;
    let detail: string;
    if (blocker !== undefined) {
      detail = `(not run: step ${blocker} failed)`;
    } else {
      const stepSignal = AbortSignal.any([signal, AbortSignal.timeout(step.timeoutMs)]);
      try {
        const note = await step.run(stepSignal);
        passed = true;
        detail = note ? `— ${note}` : "";
      } catch (err) {
        detail = `(${stepSignal.aborted && !signal.aborted ? `deadline ${step.timeoutMs / 1000} s: ` : ""}${reasonOf(err)})`;
      }
    }
    const seconds = Math.round((performance.now() - start) / 100) / 10;
    if (!passed) failed.add(step.n);
    print(`${passed ? "PASS" : "FAIL"} step ${step.n}: ${step.title} ${detail} [${seconds} s]`.replace(/\s+\[/, " ["));
    outcomes.push({ n: step.n, passed, seconds });
  }
  return outcomes;
}
