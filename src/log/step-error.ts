import { errorText } from "./error-text.ts";

/**
 * One step of a procedure failed (G6): the message is `<step>: <cause as text>`, lowercase as the step
 * is written, and `cause` keeps the original error for `instanceof` checks and the log's cause chain.
 * Subclasses only rename it (`name`), so callers that match the class keep telling procedures apart.
 */
export class StepError extends Error {
  override readonly name: string = "StepError";
  constructor(
    /** What was being done, e.g. "failed applying changed units". */
    readonly step: string,
    cause: unknown,
  ) {
    super(`${step}: ${errorText(cause)}`, { cause });
  }
}

/** Runs `fn`; a failure is rethrown as a StepError naming `what` (the original is its `cause`). */
export async function step<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new StepError(what, err);
  }
}
