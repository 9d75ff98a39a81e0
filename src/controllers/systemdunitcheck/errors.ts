/** The message of anything thrown (non-Errors are stringified). */
export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** One step of a systemd-unit-check pass failed; the message names the step, `cause` is the original error. */
export class UnitCheckError extends Error {
  override readonly name = "UnitCheckError";
  constructor(step: string, cause: unknown) {
    super(`${step}: ${errorText(cause)}`, { cause });
  }
}
