// The apply's error classes, apart from the code that throws them: the reporter and the rollout gate tell
// failures apart by class on the start-up path, and importing files.ts or units.ts for that would evaluate
// the apply's write and unit steps in an agent that applies nothing (idle RSS).

/** A file cannot be placed (e.g. its cross-device helper name is taken by a directory). */
export class FileApplyError extends Error {
  override readonly name = "FileApplyError";
  constructor(
    message: string,
    readonly path: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** One or more unit commands failed; `errors` holds each. */
export class UnitCommandsError extends Error {
  override readonly name = "UnitCommandsError";
  constructor(readonly errors: readonly Error[]) {
    super(errors.map((e) => e.message).join("; "), { cause: errors[0] });
  }
}
