import type { Clock } from "../../clock/index.ts";
import type { HostFs } from "../../host/index.ts";
import { isNotFound, nodes } from "../../kube/index.ts";
import type { Kube, KubeObject, Reader } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { Systemd } from "../../systemd/index.ts";
import { createEventRecorder, nodeRef, type EventRecorder } from "../events.ts";
import { decodeChanges } from "../../osc/index.ts";
import { changesPath, lastAppliedPath } from "../shared/index.ts";
import { checkFile, checkUnit } from "./checks.ts";
import { aggregateDrift, noPendingWork, pendingWork, withoutPending, type Drift, type PendingWork } from "./drift.ts";
import { parseLastApplied, type CheckedFile, type CheckedOsc, type CheckedUnit } from "./last-applied.ts";
import type { ReadTargetOsc } from "./target.ts";
import { errorText } from "../../log/index.ts";

// lastAppliedPath: written by the OSC controller after every completed apply; changesPath: its unfinished
// change set (upstream's paths; the format is shared through src/osc).

/** The event source component of the checker's Warning events (core/v1 recorder). */
const oscCheckerComponent = "osc-checker";

export interface OscCheckerDeps {
  /** The cache (the Node informer); the checker never reads the Node live. */
  readonly nodes: Reader;
  /** Node name discovered at start-up; undefined or "" → not registered, nothing to check. */
  readonly nodeName: string | undefined;
  readonly host: HostFs;
  readonly systemd: Systemd;
  /** Built with component `osc-checker` (see `createOscCheckerEventRecorder`). */
  readonly events: EventRecorder;
  readonly log: Logger;
  /**
   * The OSC being applied (the Secret's). A file or unit that already matches it is progress of an
   * apply that a restart interrupted, not drift. Absent: only the last-applied OSC counts.
   */
  readonly targetOsc?: ReadTargetOsc;
}

/** A step of the checker failed; the message names the step, `cause` is the original error. */
export class OscCheckerError extends Error {
  override readonly name = "OscCheckerError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** The core/v1 event recorder the checker reports through: component `osc-checker`, host = hostname. */
export function createOscCheckerEventRecorder(deps: {
  readonly kube: Kube;
  readonly clock: Clock;
  readonly log: Logger;
  readonly hostName: string;
}): EventRecorder {
  return createEventRecorder({ kube: deps.kube, clock: deps.clock, log: deps.log, component: oscCheckerComponent, host: deps.hostName });
}

async function readNode(deps: OscCheckerDeps, signal: AbortSignal): Promise<KubeObject | undefined> {
  if (deps.nodeName === undefined || deps.nodeName === "") return undefined;
  try {
    return await deps.nodes.get<KubeObject>(nodes, "", deps.nodeName, { signal });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new OscCheckerError(`failed getting node: ${errorText(err)}`, { cause: err });
  }
}

async function readOsc(deps: OscCheckerDeps): Promise<CheckedOsc | undefined> {
  // Bytes, not text: Bun's YAML parser reads them as they are (a big OSC's text would be a third copy).
  let bytes: Uint8Array | undefined;
  try {
    bytes = await deps.host.readFile(lastAppliedPath);
  } catch (err) {
    throw new OscCheckerError(`cannot read last-applied OSC: ${errorText(err)}`, { cause: err });
  }
  // parseLastApplied's errors already read "cannot parse OSC YAML: …".
  return bytes === undefined ? undefined : parseLastApplied(bytes);
}

/**
 * What an interrupted apply is about to write: a resumed change set rewrites those files and units,
 * so their difference from the last-applied OSC is progress, not drift. An unreadable change set
 * excludes nothing (the OSC controller reports it when it resumes).
 */
async function readPending(deps: OscCheckerDeps, log: Logger): Promise<PendingWork> {
  try {
    const bytes = await deps.host.readFile(changesPath);
    return bytes === undefined ? noPendingWork : pendingWork(decodeChanges(bytes));
  } catch (err) {
    log.info("Cannot read the last computed changes, checking every file", { path: changesPath, err });
    return noPendingWork;
  }
}

interface TargetIndex {
  readonly files: ReadonlyMap<string, CheckedFile>;
  readonly units: ReadonlyMap<string, CheckedUnit>;
}

/** The target OSC by path and name; the first entry of a duplicate wins. */
async function indexTarget(read: Promise<CheckedOsc | undefined> | undefined): Promise<TargetIndex> {
  const osc = await read;
  const files = new Map<string, CheckedFile>();
  const units = new Map<string, CheckedUnit>();
  for (const f of osc?.files ?? []) if (!files.has(f.path)) files.set(f.path, f);
  for (const u of osc?.units ?? []) if (!units.has(u.name)) units.set(u.name, u);
  return { files, units };
}

async function loadedUnits(deps: OscCheckerDeps, signal: AbortSignal): Promise<Set<string>> {
  try {
    return new Set((await deps.systemd.listUnits(signal)).map((u) => u.name));
  } catch (err) {
    throw new OscCheckerError(`failed listing systemd units: ${errorText(err)}`, { cause: err });
  }
}

/**
 * The OSC consistency checker (spec §7.6): compares the last applied OSC with the files and units on
 * this machine and reports the drift as ONE Warning event on the Node (a single finding keeps
 * upstream's text; several are aggregated, see drift.ts). Files and units an interrupted change set
 * is about to write, or that already match the OSC being applied, are progress, not drift. It is diagnostic only — it never repairs and never fails because of
 * drift. It fails only when the Node read, the last-applied file or the unit list cannot be had. The
 * wiring runs it beside the controllers, never before them: a slow check must not delay the Lease.
 */
export async function runOscChecker(deps: OscCheckerDeps, signal: AbortSignal): Promise<void> {
  const log = deps.log.child({ component: oscCheckerComponent });
  log.info("Starting OSC checker");
  const node = await readNode(deps, signal);
  if (node === undefined) {
    log.info("Node not found yet, skipping OSC checks", { node: deps.nodeName ?? "" });
    return;
  }
  const applied = await readOsc(deps);
  if (applied === undefined) {
    log.info("No last-applied OSC found, skipping");
    return;
  }
  const osc = withoutPending(applied, await readPending(deps, log));
  const loaded = await loadedUnits(deps, signal);
  let targetIndex: Promise<TargetIndex> | undefined;
  // Read once, and only when something differs from the last-applied OSC.
  const targetOsc = () => (targetIndex ??= indexTarget(deps.targetOsc?.(signal)));
  const drifts: Drift[] = [];
  for (const file of osc.files) {
    signal.throwIfAborted();
    const finding = await checkFile(deps.host, file);
    if (finding === undefined) continue;
    const wanted = (await targetOsc()).files.get(file.path);
    // Already as the OSC being applied says: progress, not drift.
    if (wanted !== undefined && (await checkFile(deps.host, wanted)) === undefined) continue;
    drifts.push({ finding, subject: file.path });
  }
  for (const unit of osc.units) {
    signal.throwIfAborted();
    const findings = await checkUnit(deps.host, unit, loaded);
    if (findings.length === 0) continue;
    const wanted = (await targetOsc()).units.get(unit.name);
    // A difference the OSC being applied does not have either is progress, not drift.
    const still = wanted === undefined ? undefined : new Set((await checkUnit(deps.host, wanted, loaded)).map((f) => f.reason));
    for (const finding of findings) if (still === undefined || still.has(finding.reason)) drifts.push({ finding, subject: unit.name });
  }
  for (const { finding } of drifts) log.info("OSC drift", { reason: finding.reason, message: finding.message });
  const event = aggregateDrift(drifts);
  if (event !== undefined) {
    const ref = nodeRef(node);
    log.info("Emitting OSC event", { node: ref.name, reason: event.reason, findings: drifts.length });
    await deps.events.event(ref, "Warning", event.reason, "", event.message);
  }
  log.info("OSC checker finished", { findings: drifts.length });
}
