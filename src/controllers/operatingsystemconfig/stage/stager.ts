import type { Clock } from "../../../clock/index.ts";
import type { HostFs } from "../../../host/index.ts";
import type { KubeObject } from "../../../kube/index.ts";
import { errorText, type Logger } from "../../../log/index.ts";
import type { Osc } from "../../../osc/index.ts";
import type { PendingPullConfig, StagedContent } from "../apply/ports.ts";
import { hostsTomlBeforePull } from "../apply/registries.ts";
import { fetchContent, imageSource, pendingRegistryAuth, secretSource, sourceOf, StagingError, type FetchDeps } from "./fetch.ts";
import { blobPath, readStageRecord, type StagedFile, type StageRecord, stageableChecksum, StageStore } from "./store.ts";

/** Upstream's default would be none; 2 GiB holds a kubelet, the agent and extension binaries many times over. */
export const defaultStageMaxBytes = 2 * 1024 ** 3;
/** Staging leaves this share of the file system's free space alone. */
const freeSpaceReserve = 0.1;
const firstRetryMs = 5_000;
const maxRetryMs = 5 * 60_000;

export interface StagerDeps extends FetchDeps {
  readonly host: HostFs;
  readonly clock: Clock;
  readonly log: Logger;
  /** controllers.operatingSystemConfig.stagingMaxBytes (default 2 GiB). */
  readonly maxBytes: number;
  /** gardener_node_agent_staged_bytes */
  readonly stagedBytes?: (bytes: number) => void;
}

/** A staging failure: what could not be staged (an image or a Secret) and why; the apply waits for a retry. */
export interface StagingFailure {
  readonly kind: "failed";
  readonly message: string;
  readonly requeueAfterMs: number;
}

export type StageOutcome = { readonly kind: "staged"; readonly content: StagedContent } | { readonly kind: "nothing" } | StagingFailure;

/**
 * Stages a pending version (issue 23): every imageRef file and secretRef content fetched and checked
 * into the stage directory before any gate is asked; nothing outside it is written. The apply then
 * reads from the stage. One instance per controller; reconciles of one key never overlap.
 */
export class Stager {
  readonly #store: StageStore;
  #attempts = new Map<string, number>();
  #prunedAtStart = false;

  constructor(private readonly deps: StagerDeps) {
    this.#store = new StageStore(deps.host);
  }

  /** Stages `checksum` (once; later calls check the blobs are still there), keeping only it and `current`. */
  async stage(
    checksum: string,
    osc: Osc,
    current: string | undefined,
    node: KubeObject | undefined,
    signal: AbortSignal,
  ): Promise<StageOutcome> {
    // Nothing to fetch (inline files only): no stage, exactly as without staging.
    if (!stageableChecksum(checksum) || !(osc.spec.files ?? []).some((f) => sourceOf(f) !== undefined)) {
      await this.#pruneOnce(checksum, current);
      return { kind: "nothing" };
    }
    const existing = await readStageRecord(this.deps.host, checksum);
    if (existing?.state === "staged" && (await this.#complete(existing))) {
      await this.#pruneOnce(checksum, current);
      return { kind: "staged", content: this.#content(existing) };
    }
    await this.#store.ensure();
    await this.#prune(new Set([checksum, ...(current !== undefined ? [current] : [])]));
    const started = this.deps.clock.now();
    await this.#store.writeRecord({ checksum, state: "staging", bytes: 0, at: new Date(started).toISOString(), files: [] });
    try {
      const files = await this.#fetchAll(osc, node, signal);
      const bytes = files.reduce((n, f) => n + f.size, 0);
      const rec: StageRecord = { checksum, state: "staged", bytes, at: new Date(this.deps.clock.now()).toISOString(), files };
      await this.#store.writeRecord(rec);
      this.#attempts.delete(checksum);
      this.deps.stagedBytes?.(await this.#store.blobBytes());
      this.deps.log.info("Staged operating system config", { checksum, files: files.length, bytes, ms: this.deps.clock.now() - started });
      return { kind: "staged", content: this.#content(rec) };
    } catch (err) {
      signal.throwIfAborted();
      const message = `Staging operating system config ${checksum.slice(0, 12)} failed: ${errorText(err)}`;
      const attempt = this.#attempts.get(checksum) ?? 0;
      this.#attempts.set(checksum, attempt + 1);
      const requeueAfterMs = Math.min(firstRetryMs * 2 ** attempt, maxRetryMs);
      await this.#store.writeRecord({
        checksum,
        state: "failed",
        why: message,
        bytes: 0,
        at: new Date(this.deps.clock.now()).toISOString(),
        files: [],
      });
      // The failed version's blobs go; what the current version has staged stays (#prune reports the bytes left).
      await this.#prune(new Set([checksum, ...(current !== undefined ? [current] : [])]));
      return { kind: "failed", message, requeueAfterMs };
    }
  }

  /** After an apply: only `applied` stays staged. */
  async applied(applied: string): Promise<void> {
    await this.#prune(new Set([applied]));
  }

  /** At start (first reconcile, up to date or not): stale versions go. */
  async settle(checksum: string): Promise<void> {
    await this.#pruneOnce(checksum, undefined);
  }

  async #pruneOnce(checksum: string, current: string | undefined): Promise<void> {
    if (this.#prunedAtStart) return;
    await this.#prune(new Set([checksum, ...(current !== undefined ? [current] : [])]));
  }

  async #prune(keep: ReadonlySet<string>): Promise<void> {
    this.#prunedAtStart = true;
    const removed = await this.#store.prune(keep);
    if (removed.length > 0) this.deps.log.info("Removed stale staged versions", { checksums: removed });
    this.deps.stagedBytes?.(await this.#store.blobBytes());
  }

  async #complete(rec: StageRecord): Promise<boolean> {
    for (const f of rec.files) if (!(await this.#store.hasBlob(f))) return false;
    return true;
  }

  async #fetchAll(osc: Osc, node: KubeObject | undefined, signal: AbortSignal): Promise<StagedFile[]> {
    const files: StagedFile[] = [];
    const seen = new Map<string, StagedFile>();
    // What the stage may still grow by: the size bound minus what it holds, and the free space minus its reserve.
    const held = await this.#store.blobBytes();
    const free = await this.#store.freeBytes();
    const sizeRoom = this.deps.maxBytes - held;
    const freeRoom = free === undefined ? Number.POSITIVE_INFINITY : Math.floor(free * (1 - freeSpaceReserve));
    const room = Math.min(sizeRoom, freeRoom);
    const bound =
      sizeRoom <= freeRoom
        ? `the stage size bound of ${this.deps.maxBytes} bytes (controllers.operatingSystemConfig.stagingMaxBytes; ${held} bytes staged already)`
        : `the free space of the stage's file system minus 10 % (${freeRoom} bytes)`;
    let added = 0;
    // Pulls see the registry mirrors and credentials the pending version's apply writes before its pulls.
    const registryAuth = await pendingRegistryAuth(this.deps.kube, osc, signal);
    const pull: PendingPullConfig = { hostsToml: hostsTomlBeforePull(osc), ...(registryAuth !== undefined ? { registryAuth } : {}) };
    for (const f of osc.spec.files ?? []) {
      signal.throwIfAborted();
      const from = sourceOf(f);
      if (from === undefined) continue;
      const again = seen.get(from.source);
      if (again !== undefined) {
        files.push({ ...again, path: f.path });
        continue;
      }
      let bytes: Uint8Array;
      try {
        bytes = await fetchContent(this.deps, f, node, pull, signal);
      } catch (err) {
        signal.throwIfAborted();
        throw new StagingError(`${from.subject} (file ${f.path}): ${errorText(err)}`, { cause: err });
      }
      if (added + bytes.byteLength > room) {
        throw new StagingError(`${from.subject} (file ${f.path}): staging ${added + bytes.byteLength} bytes would exceed ${bound}`);
      }
      const { digest, added: isNew } = await this.#store.putBlob(bytes);
      if (isNew) added += bytes.byteLength;
      const staged = { path: f.path, digest, size: bytes.byteLength, source: from.source };
      seen.set(from.source, staged);
      files.push(staged);
    }
    return files;
  }

  #content(rec: StageRecord): StagedContent {
    const bySource = new Map(rec.files.map((f) => [f.source, f] as const));
    const read = async (source: string) => {
      const f = bySource.get(source);
      return f === undefined ? undefined : this.#store.readBlob(f);
    };
    return {
      imageFile: async (image, pathInImage) => {
        const f = bySource.get(imageSource(image, pathInImage));
        const bytes = f === undefined ? undefined : await this.#store.readBlob(f);
        return f === undefined || bytes === undefined ? undefined : { bytes, blob: blobPath(f.digest) };
      },
      secretFile: (name, key) => read(secretSource(name, key)),
    };
  }
}
