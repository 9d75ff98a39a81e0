/**
 * §4 step 4's Node label patch, started early so that it runs while the change set is planned (planning
 * only reads). The rules that make the overlap invisible from outside:
 * - nothing on the host is written before it succeeded (`ready` is handed to the apply, which awaits it
 *   between planning and the first write);
 * - every way out of the reconcile awaits it (`done()`), so its failure is the reconcile's error even
 *   when the reconcile would have ended differently;
 * - when the apply fails with the patch's own failure, `isItsFailure` says so: that is reported as a
 *   failed label patch, not as a failed apply (no apply was attempted).
 */
export class LabelPatch {
  /** No Node yet, so no patch: every check passes at once. */
  static readonly none: LabelPatch = new LabelPatch(Promise.resolve());

  /** Starts `patch`; its rejection is held until someone awaits `ready` or `done()`. */
  static start(patch: () => Promise<unknown>): LabelPatch {
    return new LabelPatch(patch());
  }

  /** The patch's outcome, for the apply to await before its first write. */
  readonly ready: Promise<unknown>;

  private constructor(ready: Promise<unknown>) {
    this.ready = ready;
    ready.catch(() => undefined); // awaited on every way out (done()); this only keeps it from counting as unhandled
  }

  /** Waits for the patch; throws its failure. */
  async done(): Promise<void> {
    await this.ready;
  }

  /** Whether `err` is the patch's own failure (waits for the patch to settle). */
  async isItsFailure(err: unknown): Promise<boolean> {
    return this.ready.then(
      () => false,
      (e: unknown) => e === err,
    );
  }
}
