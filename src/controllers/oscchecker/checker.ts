import type { Clock } from "../../clock/index.ts";
import type { HostFs } from "../../host/types.ts";
import { isNotFound } from "../../kube/errors.ts";
import type { Reader } from "../../kube/readers.ts";
import { nodes } from "../../kube/resources.ts";
import type { Kube, KubeObject } from "../../kube/types.ts";
import type { Logger } from "../../log/types.ts";
import type { Systemd } from "../../systemd/types.ts";
import { createEventRecorder, nodeRef, type EventRecorder } from "../events.ts";
import { lastAppliedPath } from "../shared/index.ts";
import { checkFile, checkUnit } from "./checks.ts";
import type { Finding } from "./findings.ts";
import { parseLastApplied, type CheckedOsc } from "./last-applied.ts";

/** The event source component of the checker's Warning events (core/v1 recorder). */
export const oscCheckerComponent = "osc-checker";

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
}

/** A step of the checker failed; the message names the step, `cause` is the original error. */
export class OscCheckerError extends Error {
  override readonly name = "OscCheckerError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

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
    throw new OscCheckerError(`failed getting node: ${messageOf(err)}`, { cause: err });
  }
}

async function readOsc(deps: OscCheckerDeps): Promise<CheckedOsc | undefined> {
  let text: string | undefined;
  try {
    text = await deps.host.readText(lastAppliedPath);
  } catch (err) {
    throw new OscCheckerError(`cannot read last-applied OSC: ${messageOf(err)}`, { cause: err });
  }
  // parseLastApplied's errors already read "cannot parse OSC YAML: …".
  return text === undefined ? undefined : parseLastApplied(text);
}

async function loadedUnits(deps: OscCheckerDeps, signal: AbortSignal): Promise<Set<string>> {
  try {
    return new Set((await deps.systemd.listUnits(signal)).map((u) => u.name));
  } catch (err) {
    throw new OscCheckerError(`failed listing systemd units: ${messageOf(err)}`, { cause: err });
  }
}

/**
 * The OSC consistency checker (spec §7.6), a start-up runnable: compares the last applied OSC with
 * the files and units on this machine and reports each drift as a Warning event on the Node. It is
 * diagnostic only — it never repairs and never fails because of drift. It fails (and with it the
 * start-up) only when the Node read, the last-applied file or the unit list cannot be had.
 */
export async function runOscChecker(deps: OscCheckerDeps, signal: AbortSignal): Promise<void> {
  const log = deps.log.child({ component: oscCheckerComponent });
  log.info("Starting OSC checker");

  const node = await readNode(deps, signal);
  if (node === undefined) {
    log.info("Node not found yet, skipping OSC checks", { node: deps.nodeName ?? "" });
    return;
  }
  const osc = await readOsc(deps);
  if (osc === undefined) {
    log.info("No last-applied OSC found, skipping");
    return;
  }
  const loaded = await loadedUnits(deps, signal);

  const target = nodeRef(node);
  const report = async (finding: Finding) => {
    log.info("Emitting OSC event", { node: target.name, reason: finding.reason, message: finding.message });
    await deps.events.event(target, "Warning", finding.reason, "", finding.message);
  };
  for (const file of osc.files) {
    signal.throwIfAborted();
    const finding = await checkFile(deps.host, file);
    if (finding !== undefined) await report(finding);
  }
  for (const unit of osc.units) {
    signal.throwIfAborted();
    for (const finding of await checkUnit(deps.host, unit, loaded)) await report(finding);
  }
  log.info("OSC checker finished");
}
