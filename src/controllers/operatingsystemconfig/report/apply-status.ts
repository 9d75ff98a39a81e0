import * as v from "valibot";
import type { HostFs } from "../../../host/index.ts";
import type { Logger } from "../../../log/index.ts";
import { stateDir } from "../constants.ts";

/**
 * What `status` shows and the OSC condition is built from, kept beside the upstream state files
 * (which stay untouched): the last apply, the last successful one, the gate holding the current
 * version and the recent history. Written atomically; a node switched to the Go agent ignores it.
 */
const applyStatusPath = `${stateDir}/apply-status.json`;

const failureSchema = v.object({ step: v.string(), subject: v.string(), message: v.string() });

const applySchema = v.object({
  checksum: v.string(),
  /** RFC 3339 */
  startedAt: v.string(),
  /** Absent while the apply runs. */
  durationMs: v.optional(v.number()),
  outcome: v.picklist(["Applying", "Applied", "Failed"]),
  filesChanged: v.optional(v.number()),
  filesDeleted: v.optional(v.number()),
  unitsRestarted: v.optional(v.array(v.string())),
  failure: v.optional(failureSchema),
});

const gateSchema = v.object({
  reason: v.string(),
  message: v.string(),
  checksum: v.string(),
  since: v.string(),
});

const applyStatusSchema = v.object({
  secret: v.string(),
  lastApply: v.optional(applySchema),
  lastSuccess: v.optional(applySchema),
  lastFailure: v.optional(applySchema),
  gate: v.optional(gateSchema),
  /** Set while the OSC Secret cannot be found. */
  secretMissingSince: v.optional(v.string()),
});

export type ApplyRecord = v.InferOutput<typeof applySchema>;
export type GateRecord = v.InferOutput<typeof gateSchema>;
export type ApplyStatus = v.InferOutput<typeof applyStatusSchema>;

class ApplyStatusError extends Error {
  override readonly name = "ApplyStatusError";
}

/** The persisted status, undefined before the agent first wrote one. */
export async function readApplyStatus(host: HostFs): Promise<ApplyStatus | undefined> {
  const text = await host.readText(applyStatusPath);
  if (text === undefined) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // Not kept as cause: the parser's message quotes the token it stumbled on (errorText would repeat it).
    throw new ApplyStatusError(`${applyStatusPath} is not valid JSON`);
  }
  const parsed = v.safeParse(applyStatusSchema, raw);
  if (!parsed.success)
    throw new ApplyStatusError(`${applyStatusPath}: ${v.getDotPath(parsed.issues[0]) ?? "(root)"}: ${parsed.issues[0].message}`);
  return parsed.output;
}

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
      // Not fsynced: a report for `status`, replaced at every step of every apply. Its two fsyncs (a journal
      // commit each) ran on the thread pool alongside the planning and the file group of the apply they
      // report on. A crash may leave the previous record (or an unreadable file, which the reader skips).
      await this.deps.host.writeFileAtomic(applyStatusPath, `${JSON.stringify(status, null, 2)}\n`, 0o600, { durable: false });
    } catch (err) {
      // Reporting must not fail the apply it reports on; `status` then shows the previous record.
      this.deps.log.error("Failed writing apply status file", { err });
    }
  }
}

/** `status` without `key` (the same object when it has none, so an unchanged status is not written again). */
export function without(status: ApplyStatus, key: "gate" | "secretMissingSince"): ApplyStatus {
  if (status[key] === undefined) return status;
  const { [key]: _, ...rest } = status;
  return rest;
}
