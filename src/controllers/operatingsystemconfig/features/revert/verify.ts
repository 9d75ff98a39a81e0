import type { KubeObject } from "../../../../kube/index.ts";
import { emptyChanges, type Osc, type OscFile, type Unit } from "../../../../osc/index.ts";
import type { Systemd } from "../../../../systemd/index.ts";
import { nodeRef } from "../../../events.ts";
import { applyOsc, type ApplyInput, type ApplyStop } from "../../apply/run.ts";
import { step } from "../../apply/context.ts";
import { agentUnitName, type OscControllerDeps } from "../../deps.ts";
import type { GateHold } from "../../gates/gate.ts";
import { allFiles, mergeUnits } from "../../plan/merge.ts";
import { restoreChanges } from "../../apply/restore.ts";
import { readChanges, readLastApplied, writeChanges, writeLastApplied } from "../../plan/state.ts";

const unitFailurePolicyAnnotation = "node-agent.gardener.cloud/unit-failure-policy";
const unitRevertedReason = "UnitReverted";
const defaultUnitVerification = { windowMs: 30_000, pollMs: 1_000 } as const;

export type UnitFailurePolicy = "retry" | "revert";

/** `revert` only when the Node asks for it; the default keeps upstream's retry with backoff. */
function unitFailurePolicyOf(node: KubeObject): UnitFailurePolicy {
  return node.metadata.annotations?.[unitFailurePolicyAnnotation] === "revert" ? "revert" : "retry";
}

const revertMessage = (units: readonly string[], checksum: string): string =>
  `unit(s) ${units.join(", ")} failed after the restart and were reverted to the last-applied configuration; ` +
  `operating system config ${checksum} is not retried until its Secret changes or the ${unitFailurePolicyAnnotation} annotation is removed`;

/**
 * The gate of a reverted OSC version: while the changes file holds a reverted change set of `checksum`
 * and the Node still asks for `revert`, nothing is applied; looked at again after the verification
 * window (the annotation may be removed meanwhile; a new Secret version reconciles at once anyway).
 */
export async function unitRevertHold(
  deps: OscControllerDeps,
  node: KubeObject | undefined,
  checksum: string,
): Promise<GateHold | undefined> {
  if (node === undefined || unitFailurePolicyOf(node) !== "revert") return undefined;
  const persisted = await readChanges(deps.host);
  const units = persisted?.operatingSystemConfigChecksum === checksum ? (persisted.unitRevert?.units ?? []) : [];
  return units.length === 0 ? undefined : revertHold(deps, units, checksum);
}

/** The condition's False/UnitReverted: the hold of a version whose failed units were reverted. */
const revertHold = (deps: OscControllerDeps, units: readonly string[], checksum: string): GateHold => ({
  reason: unitRevertedReason,
  message: revertMessage(units, checksum),
  requeueAfterMs: (deps.unitVerification ?? defaultUnitVerification).windowMs,
});

/** The Systemd port, noting each unit a restart job finished for. */
function recordingRestarts(s: Systemd, restarted: Set<string>): Systemd {
  return {
    daemonReload: (sig) => s.daemonReload(sig),
    enable: (u, sig) => s.enable(u, sig),
    disable: (u, sig) => s.disable(u, sig),
    start: (u, sig) => s.start(u, sig),
    stop: (u, sig) => s.stop(u, sig),
    restart: async (u, sig) => {
      await s.restart(u, sig);
      restarted.add(u);
    },
    listUnits: (sig) => s.listUnits(sig),
    listUnitsByNames: (n, sig) => s.listUnitsByNames(n, sig),
    unitProperties: (u, sig) => s.unitProperties(u, sig),
    triggeredBy: (u, sig) => s.triggeredBy(u, sig),
    serviceType: (u, sig) => s.serviceType(u, sig),
    close: () => s.close(),
  };
}

/** Polls the units for the verification window; returns those seen failed (or crash-looping). */
async function watchUnits(deps: OscControllerDeps, units: readonly string[], signal: AbortSignal): Promise<string[]> {
  const { windowMs, pollMs } = deps.unitVerification ?? defaultUnitVerification;
  const deadline = deps.clock.now() + windowMs;
  const failed = new Set<string>();
  for (;;) {
    for (const u of units) {
      if (failed.has(u)) continue;
      const p = await deps.systemd.unitProperties(u, signal);
      if (p.activeState === "failed" || p.subState === "auto-restart") failed.add(u);
    }
    const left = deadline - deps.clock.now();
    if (failed.size === units.length || left <= 0) break;
    await deps.clock.sleep(Math.min(pollMs, left), signal);
  }
  return units.filter((u) => failed.has(u));
}

/**
 * applyOsc, and with the Node's `unit-failure-policy: revert`: every unit the apply restarted that was
 * active before is watched for the verification window (30 s). Failed units are reverted (revertUnits),
 * a Warning event names them, and the apply stops with the UnitReverted hold: the checksum annotation
 * is not updated and the condition reads False/UnitReverted.
 */
export async function applyVerifyingUnits(deps: OscControllerDeps, input: ApplyInput, signal: AbortSignal): Promise<ApplyStop | undefined> {
  const node = input.node;
  // Read only under the revert policy: the apply reads it again anyway (one thread-pool read fewer).
  if (node === undefined || unitFailurePolicyOf(node) !== "revert") return applyOsc(deps, input, signal);
  const before = await readLastApplied(deps.host);
  if (before === undefined) return applyOsc(deps, input, signal);
  const names = mergeUnits(input.osc)
    .map((u) => u.name)
    .filter((n) => n !== agentUnitName);
  const statuses = await step("failed reading unit states", () => deps.systemd.listUnitsByNames(names, signal));
  const activeBefore = new Set(statuses.filter((s) => s.activeState === "active").map((s) => s.name));
  const restarted = new Set<string>();
  const stop = await applyOsc({ ...deps, systemd: recordingRestarts(deps.systemd, restarted) }, input, signal);
  // An apply that stopped early (in-place update to retry) has not finished restarting: nothing to verify yet.
  if (stop !== undefined) return stop;
  const watched = [...restarted].filter((u) => activeBefore.has(u));
  if (watched.length === 0) return undefined;
  deps.log.info("Watching restarted units", {
    units: watched.join(","),
    windowMs: (deps.unitVerification ?? defaultUnitVerification).windowMs,
  });
  const failed = await step("failed watching restarted units", () => watchUnits(deps, watched, signal));
  if (failed.length === 0) return undefined;
  const after = await readLastApplied(deps.host);
  if (after === undefined) return undefined;
  await step("failed reverting units", () => revertUnits(deps, before, after, failed, input.checksum, node, signal));
  const hold = revertHold(deps, failed, input.checksum);
  await deps.events.event(nodeRef(node), "Warning", unitRevertedReason, "Revert", hold.message);
  return { hold };
}

interface UnitParts {
  readonly unit: Unit | undefined;
  readonly files: Map<string, OscFile>;
}

function partsOf(osc: Osc, name: string, hostName: string, paths: ReadonlySet<string>): UnitParts {
  return {
    unit: mergeUnits(osc).find((u) => u.name === name),
    files: new Map(
      allFiles(osc, hostName)
        .filter((f) => paths.has(f.path))
        .map((f) => [f.path, f]),
    ),
  };
}

/**
 * Brings the failed units' files (their filePaths), unit files and drop-ins back to `before`,
 * daemon-reloads and restarts them. Durable record first: the changes file keeps the new versions of
 * those parts as pending work of `checksum`, marked `unitRevert` (the hold); then the host is restored;
 * then last-applied becomes `after` with those parts as in `before` (what the host now has).
 */
async function revertUnits(
  deps: OscControllerDeps,
  before: Osc,
  after: Osc,
  failed: readonly string[],
  checksum: string,
  node: KubeObject,
  signal: AbortSignal,
): Promise<void> {
  const hostName = deps.node.hostName.toLowerCase();
  const restore = emptyChanges(`revert-${checksum}`);
  const pending = emptyChanges(checksum);
  pending.unitRevert = { units: [...failed] };
  const revertedFiles = new Map<string, OscFile | undefined>();
  const revertedUnits = new Map<string, Unit | undefined>();
  for (const name of failed) {
    const newUnit = mergeUnits(after).find((u) => u.name === name);
    const oldUnit = mergeUnits(before).find((u) => u.name === name);
    const paths = new Set([...(newUnit?.filePaths ?? []), ...(oldUnit?.filePaths ?? [])]);
    const old = partsOf(before, name, hostName, paths);
    const cur = partsOf(after, name, hostName, paths);
    for (const p of paths) {
      const o = old.files.get(p);
      const c = cur.files.get(p);
      if (o !== undefined) restore.files.changed.push(o);
      else if (c !== undefined) restore.files.deleted.push(c);
      if (c !== undefined) pending.files.changed.push(c);
      if (o !== undefined || c !== undefined) revertedFiles.set(p, o);
    }
    const oldDropIns = new Set((oldUnit?.dropIns ?? []).map((d) => d.name));
    if (oldUnit !== undefined) {
      const gone = (newUnit?.dropIns ?? []).filter((d) => !oldDropIns.has(d.name));
      restore.units.changed.push({ ...oldUnit, dropInsChanges: { changed: [...(oldUnit.dropIns ?? [])], deleted: gone } });
      restore.units.commands.push({ name, command: "restart" });
    }
    if (newUnit !== undefined) {
      const newDropIns = new Set((newUnit.dropIns ?? []).map((d) => d.name));
      const gone = (oldUnit?.dropIns ?? []).filter((d) => !newDropIns.has(d.name));
      pending.units.changed.push({ ...newUnit, dropInsChanges: { changed: [...(newUnit.dropIns ?? [])], deleted: gone } });
      pending.units.commands.push({ name, command: "restart" });
    }
    revertedUnits.set(name, oldUnit);
  }
  await writeChanges(deps.host, pending);
  deps.log.info("Reverting failed units to the last-applied configuration", { units: failed.join(","), checksum });
  await restoreChanges(deps, restore, node, signal);
  await writeLastApplied(deps.host, withParts(after, revertedUnits, revertedFiles, hostName));
}

/** `osc` with the given units and files replaced by other versions (undefined: not listed). */
function withParts(
  osc: Osc,
  units: ReadonlyMap<string, Unit | undefined>,
  files: ReadonlyMap<string, OscFile | undefined>,
  hostName: string,
): Osc {
  const mergedUnits = mergeUnits(osc).flatMap((u) => (units.has(u.name) ? [] : [u]));
  for (const u of units.values()) if (u !== undefined) mergedUnits.push(u);
  const mergedFiles = allFiles(osc, hostName).filter((f) => !files.has(f.path));
  for (const f of files.values()) if (f !== undefined) mergedFiles.push(f);
  return {
    ...osc,
    spec: { ...osc.spec, units: mergedUnits, files: mergedFiles },
    status: { ...osc.status, extensionUnits: [], extensionFiles: [] },
  };
}
