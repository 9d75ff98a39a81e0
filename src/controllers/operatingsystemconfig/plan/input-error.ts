/**
 * The OSC asks for something the agent must not or cannot do; nothing on the host was touched.
 * `permanent` (the default): only a new OSC can fix it, so the reconcile stops as a TerminalError
 * until the Secret's osc.yaml changes. Problems with things the OSC refers to (a Secret that may be
 * created later, an image tag that may be pushed again) are not permanent and are retried.
 */
export class OscInputError extends Error {
  override readonly name = "OscInputError";
  readonly permanent: boolean;
  constructor(
    message: string,
    /** The file path or unit name at fault. */
    readonly subject: string,
    options?: ErrorOptions & { readonly permanent?: boolean },
  ) {
    super(message, options);
    this.permanent = options?.permanent ?? true;
  }
}

/** Whether `err` or one of its causes is a permanent OscInputError (errors.As). */
export function permanentInputError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 16; e = e.cause, depth++) {
    if (e instanceof OscInputError) return e.permanent;
  }
  return false;
}
