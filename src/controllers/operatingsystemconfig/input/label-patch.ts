/**
 * §4 step 4's Node label patch, run while the change set is planned (planning only reads). Invisible from
 * outside because the apply awaits `ready` before its first write, every way out awaits `done()`, and
 * `isItsFailure` reports the patch's failure as its own, not as a failed apply.
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
