import type { HostFs } from "../../../host/index.ts";
import type { Logger } from "../../../log/index.ts";
import { type ApplyStatus, readApplyStatus, writeApplyStatus } from "./apply-status.ts";

/** The status file `status` reads, cached in memory: read from disk once per process, every write best effort. */
export class StatusStore {
  #status: ApplyStatus | undefined;
  #loaded = false;

  constructor(
    private readonly deps: { readonly host: HostFs; readonly log: Logger },
    /** "namespace/name" of the OSC Secret (the status of a fresh node names it). */
    private readonly secret: string,
  ) {}

  /** The status as last written. */
  async load(): Promise<ApplyStatus> {
    if (!this.#loaded) {
      this.#loaded = true;
      try {
        this.#status = await readApplyStatus(this.deps.host);
      } catch (err) {
        // The file only feeds `status`; an unreadable one is replaced by the next write.
        this.deps.log.info("Ignoring unreadable apply status file", { err });
      }
    }
    return this.#status ?? { secret: this.secret };
  }

  async save(status: ApplyStatus): Promise<void> {
    this.#status = status;
    try {
      await writeApplyStatus(this.deps.host, status);
    } catch (err) {
      // Reporting must not fail the apply it reports on; `status` then shows the previous record.
      this.deps.log.error("Failed writing apply status file", { err });
    }
  }
}

export function withoutGate(status: ApplyStatus): ApplyStatus {
  if (status.gate === undefined) return status;
  const { gate: _, ...rest } = status;
  return rest;
}
