import { StepError } from "../../log/index.ts";

/** One step of a systemd-unit-check pass failed; the message names the step, `cause` is the original error. */
export class UnitCheckError extends StepError {
  override readonly name = "UnitCheckError";
}
