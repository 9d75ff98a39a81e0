import type { KubeObject } from "../../../../kube/index.ts";
import { emptyChanges, type Osc, type OscFile, type Unit } from "../../../../osc/index.ts";
import type { Systemd } from "../../../../systemd/index.ts";
import { nodeRef } from "../../../events.ts";
import type { ApplyExtension } from "../../apply/extension.ts";
import type { ApplyPorts } from "../../apply/ports.ts";
import { restoreChanges } from "../../apply/restore.ts";
import { step } from "../../../../log/index.ts";
import { agentUnitName } from "../../constants.ts";
import { allFiles, mergeUnits } from "../../plan/merge.ts";
import { readLastApplied, writeChanges, writeLastApplied } from "../../plan/state.ts";
import { defaultUnitVerification, revertHold, unitFailurePolicyOf, unitRevertedReason } from "./gate.ts";

type Verification = { readonly windowMs: number; readonly pollMs: number };

/** The Systemd port, noting each unit a restart job finished for (every other call goes to `s` as it is). */
function recordingRestarts(s: Systemd, restarted: Set<string>): Systemd {
  const restart: Systemd["restart"] = async (u, sig) => {
    await s.restart(u, sig);
    restarted.add(u);
  };
  return new Proxy(s, {
    get: (target, key) => {
      if (key === "restart") return restart;
      const value: unknown = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Polls the units for the verification window; returns those seen failed (or crash-looping). */
async function watchUnits(deps: ApplyPorts, v: Verification, units: readonly string[], signal: AbortSignal): Promise<string[]> {
  const { windowMs, pollMs } = v;
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
 * With the Node's `unit-failure-policy: revert`, units the apply restarted that were active before are
 * watched for the window; failed ones are reverted, a Warning names them, the apply ends in UnitReverted.
 */
export function unitRevertExtension(d: { readonly unitVerification?: Verification | undefined }): ApplyExtension {
  const v = d.unitVerification ?? defaultUnitVerification;
  return {
    name: "unit-revert",
    async arm({ ports, osc, checksum, node, signal }) {
      // Read only under the revert policy: the apply reads it again anyway (one thread-pool read fewer).
      if (node === undefined || unitFailurePolicyOf(node) !== "revert") return undefined;
      const before = await readLastApplied(ports.host);
      if (before === undefined) return undefined;
      const names = mergeUnits(osc)
        .map((u) => u.name)
        .filter((n) => n !== agentUnitName);
      const statuses = await step("failed reading unit states", () => ports.systemd.listUnitsByNames(names, signal));
      const activeBefore = new Set(statuses.filter((s) => s.activeState === "active").map((s) => s.name));
      const restarted = new Set<string>();
      return {
        systemd: recordingRestarts(ports.systemd, restarted),
        async verify(sig) {
          const watched = [...restarted].filter((u) => activeBefore.has(u));
          if (watched.length === 0) return undefined;
          ports.log.info("Watching restarted units", { units: watched.join(","), windowMs: v.windowMs });
          const failed = await step("failed watching restarted units", () => watchUnits(ports, v, watched, sig));
          if (failed.length === 0) return undefined;
          const after = await readLastApplied(ports.host);
          if (after === undefined) return undefined;
          await step("failed reverting units", () => revertUnits(ports, before, after, failed, checksum, node, sig));
          const hold = revertHold(v.windowMs, failed, checksum);
          await ports.events.event(nodeRef(node), "Warning", unitRevertedReason, "Revert", hold.message);
          return hold;
        },
      };
    },
  };
}

/** The files of `osc` at `paths`, by path. */
function filesAt(osc: Osc, hostName: string, paths: ReadonlySet<string>): Map<string, OscFile> {
  return new Map(
    allFiles(osc, hostName)
      .filter((f) => paths.has(f.path))
      .map((f) => [f.path, f]),
  );
}

/**
 * Brings the failed units' files, unit files and drop-ins back to `before` and restarts them. Durable
 * record first (changes file marked `unitRevert`), then the host, then last-applied as the host now is.
 */
async function revertUnits(
  deps: ApplyPorts,
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
    const oldFiles = filesAt(before, hostName, paths);
    const curFiles = filesAt(after, hostName, paths);
    for (const p of paths) {
      const o = oldFiles.get(p);
      const c = curFiles.get(p);
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
  // Restarts whatever the disruption policy says: a reload or nothing would leave the failed unit failed.
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
