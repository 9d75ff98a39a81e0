import { SystemdJobError } from "../../../systemd/index.ts";
import { FileApplyError } from "../apply/files.ts";
import { OscInputError } from "../plan/input-error.ts";
import { UnitCommandsError } from "../apply/units.ts";
import { errorText, StepError } from "../../../log/index.ts";

/** Why an apply failed, for the condition, `status` and the history: the step and what it was working on. */
export interface ApplyFailure {
  /** The step's lowercase name ("failed applying changed units"), or "" when the error came from outside a step. */
  readonly step: string;
  /** The file path or unit name at fault, when the error names one. */
  readonly subject: string;
  /** One line: the step, then the cause (paths and unit names, never file content). */
  readonly message: string;
}

/** Paths and unit names carried by typed errors along the cause chain (first one wins). */
function subjectOf(err: unknown, depth = 0): string {
  if (depth > 8 || !(err instanceof Error)) return "";
  if (err instanceof FileApplyError) return err.path;
  if (err instanceof OscInputError) return err.subject;
  if (err instanceof SystemdJobError) return err.unit;
  if (err instanceof UnitCommandsError) {
    return err.errors
      .map((e) => subjectOf(e, depth + 1))
      .filter((s) => s !== "")
      .join(", ");
  }
  return subjectOf(err.cause, depth + 1);
}

export function describeFailure(err: unknown): ApplyFailure {
  const message = errorText(err).split("\n")[0] ?? "";
  return { step: err instanceof StepError ? err.step : "", subject: subjectOf(err), message };
}
