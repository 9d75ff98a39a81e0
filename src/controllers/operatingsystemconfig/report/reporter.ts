import type { Clock } from "../../../clock/index.ts";
import type { HostFs } from "../../../host/index.ts";
import { type Kube, type KubeObject, kubeTime, type ObjectKey, type Result } from "../../../kube/index.ts";
import type { Logger } from "../../../log/index.ts";
import { type EventRecorder, nodeRef } from "../../events.ts";
import type { GateHold } from "../gates/gate.ts";
import { type ApplyRecord, type ApplyStatus, StatusStore, without } from "./apply-status.ts";
import { appliedState, applyingState, conditionUnchanged, failedState, gateState } from "./condition.ts";
import { describeFailure } from "./failure.ts";
import { type ApplyOutcome, appendHistory, applyHistoryAnnotation, type ChangeSummary, historyEntry } from "./history.ts";
import type { OscMetrics } from "./metrics.ts";
import { NodeReports } from "./node-reports.ts";

export interface OscReporterDeps {
  readonly kube: Kube;
  readonly host: HostFs;
  readonly clock: Clock;
  readonly log: Logger;
  readonly events: EventRecorder;
  readonly metrics: OscMetrics;
  /** A note for the True condition's message (what the background drift check found last). */
  readonly conditionNote?: () => string | undefined;
}

/** One apply from its first step on: collects the change summary and reports the outcome. */
export interface ApplyRun {
  /** Called by the apply once its change set is known (apply/run.ts `onPlanned`). */
  readonly planned: (summary: ChangeSummary) => void;
  /** The history annotation with this apply's entry, for the patch that sets the checksum annotation. */
  historyAnnotations(node: KubeObject, outcome: ApplyOutcome): Record<string, string>;
  /** The host is at the new version: status file and metrics (before the Node is patched). */
  hostApplied(): Promise<void>;
  /** Condition True/Applied (after the checksum patch succeeded), sent in the background in report order. */
  applied(node: KubeObject | undefined, signal: AbortSignal): void;
  /** Condition False/ApplyFailed naming the step and subject, history, metrics, status file. */
  failed(node: KubeObject | undefined, err: unknown, signal: AbortSignal): Promise<void>;
}

const secretMissingFirstRetryMs = 5_000;
const secretMissingMaxRetryMs = 5 * 60_000;

/** Turns every decision into the Node condition, events, metrics and the status file; best effort (a failed patch is logged). */
export class OscReporter {
  readonly #store: StatusStore;
  readonly #node: NodeReports;
  #heldEvents = new Set<string>();
  #missingAttempts = 0;
  /** Reports sent while an apply runs, in order (each step catches its own failure, so this never rejects). */
  #tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: OscReporterDeps,
    private readonly secret: ObjectKey,
  ) {
    this.#store = new StatusStore(deps, `${secret.namespace}/${secret.name}`);
    this.#node = new NodeReports(deps);
  }

  /** The Secret does not exist: Warning event once per absence, condition, a log line per retry, backoff. */
  async secretMissing(node: KubeObject | undefined, signal: AbortSignal): Promise<Result> {
    await this.#tail;
    const name = `${this.secret.namespace}/${this.secret.name}`;
    const status = await this.#store.load();
    const retryInMs = Math.min(secretMissingFirstRetryMs * 2 ** this.#missingAttempts, secretMissingMaxRetryMs);
    this.#missingAttempts++;
    this.deps.log.info("Operating system config secret not found, checking again", {
      secret: name,
      attempt: this.#missingAttempts,
      retryInMs,
    });
    this.deps.metrics.upToDate(false);
    this.deps.metrics.held(false);
    this.deps.metrics.waiting(undefined);
    const message = `Secret ${name} with the operating system config does not exist; it is applied as soon as it is created`;
    if (status.secretMissingSince === undefined) {
      await this.#store.save({ ...status, secretMissingSince: kubeTime(this.deps.clock.now()) });
      if (node !== undefined) await this.deps.events.event(nodeRef(node), "Warning", "OSCSecretMissing", "Reconcile", message);
    }
    await this.#node.condition(node, gateState("SecretMissing", message), signal);
    return { requeueAfterMs: retryInMs };
  }

  /** A gate holds `checksum`: log line, condition False/<reason>, one event per version and reason, metrics, status file, requeue. */
  async report(node: KubeObject | undefined, checksum: string, hold: GateHold, signal?: AbortSignal): Promise<Result> {
    await this.#tail;
    this.deps.log.info("Holding the operating system config apply", {
      reason: hold.reason,
      why: hold.message,
      checksum,
      requeueAfterMs: hold.requeueAfterMs,
    });
    const status = this.#found(await this.#store.load());
    this.deps.metrics.upToDate(false);
    this.deps.metrics.held(hold.reason === "Held");
    this.deps.metrics.waiting(hold.reason);
    const state = gateState(hold.reason, hold.message);
    const existing = this.#node.existing(node);
    const key = `${checksum}/${hold.reason}`;
    const gateRecordsItsOwnEvent = hold.reason === "UnitReverted"; // the revert extension's Warning names the units
    if (!gateRecordsItsOwnEvent && !this.#heldEvents.has(key) && !conditionUnchanged(existing, state) && node !== undefined) {
      await this.deps.events.event(
        nodeRef(node),
        hold.reason === "RolloutHalted" || hold.reason === "StagingFailed" ? "Warning" : "Normal",
        hold.reason,
        "Reconcile",
        hold.message,
      );
    }
    this.#heldEvents.add(key);
    if (status.gate?.checksum !== checksum || status.gate.reason !== hold.reason || status.gate.message !== hold.message) {
      const since =
        status.gate?.checksum === checksum && status.gate.reason === hold.reason ? status.gate.since : kubeTime(this.deps.clock.now());
      await this.#store.save({ ...status, gate: { reason: hold.reason, message: hold.message, checksum, since } });
    }
    await this.#node.condition(node, state, signal);
    return { requeueAfterMs: hold.requeueAfterMs };
  }

  /**
   * The Secret's OSC cannot be applied at all (undecodable, no osc.yaml): condition False/ApplyFailed and
   * the last failure, without an apply or a history entry. The Node may still run an older version.
   */
  async rejected(node: KubeObject | undefined, checksum: string, err: unknown, signal: AbortSignal): Promise<void> {
    await this.#tail;
    const failure = describeFailure(err);
    const now = new Date(this.deps.clock.now()).toISOString();
    const rec: ApplyRecord = { checksum, startedAt: now, durationMs: 0, outcome: "Failed", failure };
    await this.#store.save({ ...without(this.#found(await this.#store.load()), "gate"), lastApply: rec, lastFailure: rec });
    this.deps.metrics.upToDate(false);
    this.deps.metrics.held(false);
    this.deps.metrics.waiting(undefined);
    await this.#node.condition(node, failedState(checksum, failure.message), signal);
  }

  /** The Node already runs `checksum`: make the condition and metrics say so (once; nothing sent when they do). */
  async upToDate(node: KubeObject | undefined, checksum: string, signal: AbortSignal): Promise<void> {
    await this.#tail;
    const status = await this.#store.load();
    let next = without(this.#found(status), "gate");
    // An apply whose process stopped between the Node patch and its own record: it did finish.
    if (next.lastApply?.outcome === "Applying" && next.lastApply.checksum === checksum) {
      const done = { ...next.lastApply, outcome: "Applied" as const };
      next = { ...next, lastApply: done, lastSuccess: done };
    }
    if (next !== status) await this.#store.save(next);
    const success = next.lastSuccess;
    if (success?.checksum === checksum)
      this.deps.metrics.appliedAt(Math.floor(Date.parse(success.startedAt) / 1000) + Math.round((success.durationMs ?? 0) / 1000));
    this.deps.metrics.upToDate(true);
    this.deps.metrics.held(false);
    this.deps.metrics.waiting(undefined);
    await this.#node.condition(node, appliedState(checksum, this.deps.conditionNote?.()), signal);
  }

  /** An apply of `checksum` starts now: condition Unknown/Applying, status file (in the background), metrics. */
  async startApply(node: KubeObject | undefined, checksum: string, signal: AbortSignal, staged = false): Promise<ApplyRun> {
    const { clock } = this.deps;
    const startMs = clock.now();
    let summary: ChangeSummary | undefined;
    let durationMs: number | undefined;
    const finish = () => (durationMs ??= clock.now() - startMs);
    const record = (outcome: ApplyRecord["outcome"]): ApplyRecord => ({
      checksum,
      startedAt: new Date(startMs).toISOString(),
      ...(outcome === "Applying" ? {} : { durationMs: finish() }),
      outcome,
      ...(summary !== undefined ? { ...summary, unitsRestarted: [...summary.unitsRestarted] } : {}),
    });
    // Another look at a version that failed or that a gate inside the apply held keeps saying so (status
    // False since the first time) instead of flapping to Unknown and back at every backoff step or look.
    const { lastApply: last, gate } = await this.#store.load();
    const stoppedInside = last?.outcome === "Applying" && last.checksum === checksum && gate?.checksum === checksum;
    const quiet = (last?.outcome === "Failed" && last.checksum === checksum) || stoppedInside;
    this.deps.metrics.upToDate(false);
    this.deps.metrics.held(false);
    this.deps.metrics.waiting(undefined);
    // Not awaited here: the apply must not wait for a rate-limited API call or an fsync. The outcome
    // reports below wait for it, so Applying never lands after Applied.
    this.#tail = this.#tail.then(async () => {
      await this.#store.save({ ...this.#found(await this.#store.load()), lastApply: record("Applying") });
      if (!quiet) await this.#node.condition(node, applyingState(checksum), signal);
    });

    const history = (n: KubeObject, outcome: ApplyOutcome) => ({
      [applyHistoryAnnotation]: appendHistory(
        n.metadata.annotations?.[applyHistoryAnnotation],
        historyEntry(checksum, startMs, finish(), summary, outcome),
      ),
    });
    return {
      planned: (s) => {
        summary = s;
      },
      historyAnnotations: history,
      hostApplied: async () => {
        await this.#tail;
        const rec = record("Applied");
        await this.#store.save({ ...without(await this.#store.load(), "gate"), lastApply: rec, lastSuccess: rec });
        this.deps.metrics.observeApply(finish() / 1000, "applied");
        this.deps.metrics.appliedAt(Math.floor(clock.now() / 1000));
      },
      applied: (n, sig) => {
        this.deps.metrics.gatesOpenToApplied((clock.now() - startMs) / 1000, staged);
        this.deps.metrics.upToDate(true);
        // Queued, not awaited: a version that follows at once is not held up by this rate-limited call,
        // and every later report waits for the queue, so Applied still lands before the next Applying.
        this.#tail = this.#tail.then(() => this.#node.condition(n, appliedState(checksum, this.deps.conditionNote?.()), sig));
      },
      failed: async (n, err, sig) => {
        await this.#tail;
        const failure = describeFailure(err);
        const rec = { ...record("Failed"), failure };
        await this.#store.save({ ...without(await this.#store.load(), "gate"), lastApply: rec, lastFailure: rec });
        this.deps.metrics.observeApply(finish() / 1000, "failed");
        await this.#node.condition(n, failedState(checksum, failure.message), sig);
        if (n !== undefined) await this.#node.patch(n, "history", { metadata: { annotations: history(n, "Failed") } }, undefined, sig);
      },
    };
  }

  /** The Secret exists (again): a later absence gets its event and backoff afresh. */
  #found(status: ApplyStatus): ApplyStatus {
    this.#missingAttempts = 0;
    return without(status, "secretMissingSince");
  }
}
