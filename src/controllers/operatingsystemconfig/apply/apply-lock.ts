/**
 * Serialises everything that writes the OSC's files and units: the controller's apply and the
 * background drift repair (and a revert). `generation` counts finished holders, so a reader that
 * worked without the lock can tell whether an apply ran meanwhile.
 */
export class ApplyLock {
  private tail: Promise<void> = Promise.resolve();
  private holders = 0;
  generation = 0;

  get busy(): boolean {
    return this.holders > 0;
  }

  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const before = this.tail;
    let release: () => void = () => undefined;
    this.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.holders++;
    await before;
    try {
      return await fn();
    } finally {
      this.holders--;
      this.generation++;
      release();
    }
  }
}

/** Runs `fn` under `lock` when there is one (callers without drift/revert wiring pass none). */
export const exclusively = <T>(lock: ApplyLock | undefined, fn: () => Promise<T>): Promise<T> =>
  lock === undefined ? fn() : lock.exclusive(fn);
