import { emptyChanges, type Osc, type OscChanges, type OscFile, type RegistryConfig } from "../../../osc/index.ts";
import { sameFile, semanticEqual } from "./equal.ts";
import { allFiles, containerdConfigured, mergeUnits, unitCommand } from "./merge.ts";

/** files.changed / files.deleted of §5.2; `old` undefined = first apply. */
export function computeFileDiff(old: Osc | undefined, cur: Osc, hostName: string): { changed: OscFile[]; deleted: OscFile[] } {
  const now = allFiles(cur, hostName);
  const before = old === undefined ? [] : allFiles(old, hostName);
  const oldByPath = new Map(before.map((f) => [f.path, f]));
  const newPaths = new Set(now.map((f) => f.path));
  return {
    changed: now.filter((f) => {
      const o = oldByPath.get(f.path);
      return o === undefined || !sameFile(o, f);
    }),
    deleted: before.filter((f) => !newPaths.has(f.path)),
  };
}

/** units.changed / deleted / commands of §5.4. */
export function computeUnitDiff(
  old: Osc | undefined,
  cur: Osc,
  changedFiles: readonly OscFile[],
): Pick<OscChanges["units"], "changed" | "deleted" | "commands"> {
  const now = mergeUnits(cur);
  const out: OscChanges["units"] = { changed: [], deleted: [], commands: [] };
  const before = old === undefined ? [] : mergeUnits(old);
  const oldByName = new Map(before.map((u) => [u.name, u]));
  const newNames = new Set(now.map((u) => u.name));
  const changedPaths = new Set(changedFiles.map((f) => f.path));
  out.deleted = before.filter((u) => !newNames.has(u.name));
  for (const u of now) {
    // A new unit is changed with all its drop-ins.
    const o = oldByName.get(u.name);
    const fileChanged = (u.filePaths ?? []).some((p) => changedPaths.has(p));
    if (o !== undefined && semanticEqual(o, u) && !fileChanged) continue;
    const newDropIns = u.dropIns ?? [];
    const oldDropIns = o?.dropIns ?? [];
    const newDropInNames = new Set(newDropIns.map((d) => d.name));
    const oldByDropIn = new Map(oldDropIns.map((d) => [d.name, d]));
    out.changed.push({
      ...u,
      dropInsChanges: {
        changed: newDropIns.filter((d) => {
          const od = oldByDropIn.get(d.name);
          return od === undefined || od.content !== d.content;
        }),
        deleted: oldDropIns.filter((d) => !newDropInNames.has(d.name)),
      },
    });
    out.commands.push({ name: u.name, command: unitCommand(u) });
  }
  return out;
}

/** containerd part of §5.5. */
export function computeContainerdDiff(old: Osc | undefined, cur: Osc): OscChanges["containerd"] {
  const configured = containerdConfigured(cur);
  // A first apply writes containerd's configuration whatever the OSC says; a later one only when configured.
  if (old !== undefined && !configured) return { configFileChanged: false, registries: { upstreamsToProbe: [], desired: [], deleted: [] } };
  const registries: RegistryConfig[] = configured ? [...(cur.spec.criConfig?.containerd?.registries ?? [])] : [];
  const oldConfigured = old !== undefined && containerdConfigured(old);
  const oldCri = old?.spec.criConfig;
  const newCri = cur.spec.criConfig;
  const oldRegs = oldConfigured ? (oldCri?.containerd?.registries ?? []) : [];
  const oldByUpstream = new Map(oldRegs.map((r) => [r.upstream, r]));
  const newUpstreams = new Set(registries.map((r) => r.upstream));
  return {
    configFileChanged:
      !oldConfigured ||
      oldCri?.containerd?.sandboxImage !== newCri?.containerd?.sandboxImage ||
      !semanticEqual(oldCri?.containerd?.plugins, newCri?.containerd?.plugins) ||
      oldCri?.cgroupDriver !== newCri?.cgroupDriver,
    registries: {
      upstreamsToProbe: registries
        .filter((r) => {
          if (r.readinessProbe !== true) return false;
          const o = oldByUpstream.get(r.upstream);
          return o === undefined || !semanticEqual(o, r);
        })
        .map((r) => r.upstream),
      desired: registries,
      deleted: oldRegs.filter((r) => !newUpstreams.has(r.upstream)),
    },
  };
}

/** A fresh change set for `checksum`: `cur` against the last fully applied OSC (`old`, undefined on first apply). */
export function computeChanges(old: Osc | undefined, cur: Osc, checksum: string, hostName: string): OscChanges {
  const c = emptyChanges(checksum);
  c.files = computeFileDiff(old, cur, hostName);
  c.units = computeUnitDiff(old, cur, c.files.changed);
  c.containerd = computeContainerdDiff(old, cur);
  return c;
}

/** §5.1: resume the persisted change set when it belongs to this checksum, else recompute. */
export function resumeOrCompute(
  persisted: OscChanges | undefined,
  old: Osc | undefined,
  cur: Osc,
  checksum: string,
  hostName: string,
): { changes: OscChanges; resumed: boolean } {
  if (persisted !== undefined && persisted.operatingSystemConfigChecksum === checksum) return { changes: persisted, resumed: true };
  return { changes: computeChanges(old, cur, checksum, hostName), resumed: false };
}
