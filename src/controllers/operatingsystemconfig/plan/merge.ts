import type { Osc, OscFile, Unit } from "../../../osc/index.ts";

/**
 * spec.units ++ status.extensionUnits merged by name: the first occurrence is kept, later ones
 * override enable/command/content when set and append dropIns and filePaths. First-occurrence order.
 */
export function mergeUnits(osc: Osc): Unit[] {
  const out: Unit[] = [];
  const byName = new Map<string, number>();
  for (const u of [...(osc.spec.units ?? []), ...(osc.status.extensionUnits ?? [])]) {
    const i = byName.get(u.name);
    if (i === undefined) {
      byName.set(u.name, out.length);
      out.push(copyUnit(u));
      continue;
    }
    const m = out[i] as Unit;
    const merged: Unit = { ...m };
    if (u.enable !== undefined) merged.enable = u.enable;
    if (u.command !== undefined) merged.command = u.command;
    if (u.content !== undefined) merged.content = u.content;
    const dropIns = [...(m.dropIns ?? []), ...(u.dropIns ?? [])];
    const filePaths = [...(m.filePaths ?? []), ...(u.filePaths ?? [])];
    if (dropIns.length > 0) merged.dropIns = dropIns;
    if (filePaths.length > 0) merged.filePaths = filePaths;
    out[i] = merged;
  }
  return out;
}

function copyUnit(u: Unit): Unit {
  const c: Unit = { name: u.name };
  if (u.command !== undefined) c.command = u.command;
  if (u.enable !== undefined) c.enable = u.enable;
  if (u.content !== undefined) c.content = u.content;
  if (u.dropIns !== undefined) c.dropIns = [...u.dropIns];
  if (u.filePaths !== undefined) c.filePaths = [...u.filePaths];
  return c;
}

/** spec.files ++ status.extensionFiles without files meant for another host. Order preserved. */
export function allFiles(osc: Osc, hostName: string): OscFile[] {
  return [...(osc.spec.files ?? []), ...(osc.status.extensionFiles ?? [])].filter(
    (f) => f.hostName === undefined || f.hostName === hostName,
  );
}

/** `stop` if disabled or asked to stop; everything else is a restart (systemd "start" is never used). */
export function unitCommand(u: Unit): "stop" | "restart" {
  return u.enable === false || u.command === "stop" ? "stop" : "restart";
}

/** ⇔ criConfig.name == containerd and criConfig.containerd is set. */
export function containerdConfigured(osc: Osc | undefined): boolean {
  const cri = osc?.spec.criConfig;
  return cri !== undefined && cri.name === "containerd" && cri.containerd !== undefined;
}
