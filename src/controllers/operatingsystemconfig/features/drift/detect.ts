import type { HostFs } from "../../../../host/index.ts";
import type { Kube } from "../../../../kube/index.ts";
import { emptyChanges, type Osc, type OscFile, type Unit } from "../../../../osc/index.ts";
import type { Systemd } from "../../../../systemd/index.ts";
import { agentUnitName, unitDir } from "../../constants.ts";
import { allFiles, mergeUnits } from "../../plan/merge.ts";
import { planChanges } from "../../plan/content.ts";

/** How a managed path differs from the last-applied OSC. */
export type DriftKind = "content" | "mode" | "missing" | "enablement";

/** One drifted path: an OSC file, a unit file, a drop-in, or a unit's enablement (path = unit name). */
export type DriftItem =
  | { readonly type: "file"; readonly path: string; readonly kind: DriftKind }
  | { readonly type: "unit"; readonly path: string; readonly kind: DriftKind; readonly unit: string }
  | { readonly type: "dropIn"; readonly path: string; readonly kind: DriftKind; readonly unit: string; readonly dropIn: string }
  | { readonly type: "enablement"; readonly path: string; readonly kind: "enablement"; readonly unit: string; readonly want: boolean };

export interface DetectDeps {
  readonly host: HostFs;
  readonly systemd: Systemd;
  /** secretRef content is fetched (live) to compare it. */
  readonly kube: Kube;
  readonly arch: string;
}

const enc = new TextEncoder();
const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** Unit file states that count as "enabled" (an [Install]-less unit is static and cannot be disabled). */
const enabledStates = new Set(["enabled", "enabled-runtime", "static", "alias", "indirect", "generated", "linked", "linked-runtime"]);
const disabledStates = new Set(["disabled", "masked", "masked-runtime"]);

async function checkBytes(host: HostFs, path: string, want: Uint8Array | undefined, mode: number): Promise<DriftKind | undefined> {
  const st = await host.stat(path);
  if (st === undefined || st.kind !== "file") return "missing";
  if (want !== undefined) {
    const got = await host.readFile(path);
    if (got === undefined) return "missing";
    if (!sameBytes(got, want)) return "content";
  }
  return st.mode !== mode ? "mode" : undefined;
}

async function fileDrift(deps: DetectDeps, files: readonly OscFile[], signal: AbortSignal): Promise<DriftItem[]> {
  const changes = emptyChanges("drift");
  changes.files.changed = [...files];
  // Inline and secretRef bytes, decoded and fetched exactly as an apply would (imageRef: presence and mode).
  const expected = await planChanges(deps.kube, changes, deps.arch, signal);
  const out: DriftItem[] = [];
  for (const f of files) {
    const kind = await checkBytes(deps.host, f.path, expected.get(f.path), f.permissions ?? 0o600);
    if (kind !== undefined) out.push({ type: "file", path: f.path, kind });
  }
  return out;
}

async function unitDrift(deps: DetectDeps, u: Unit, signal: AbortSignal): Promise<DriftItem[]> {
  const out: DriftItem[] = [];
  const path = `${unitDir}/${u.name}`;
  if (u.content !== undefined) {
    const kind = await checkBytes(deps.host, path, enc.encode(u.content), 0o600);
    if (kind !== undefined) out.push({ type: "unit", path, kind, unit: u.name });
  }
  for (const d of u.dropIns ?? []) {
    const p = `${path}.d/${d.name}`;
    const kind = await checkBytes(deps.host, p, enc.encode(d.content), 0o600);
    if (kind !== undefined) out.push({ type: "dropIn", path: p, kind, unit: u.name, dropIn: d.name });
  }
  // The agent's own unit is always enabled (§6.3); a unit whose file is gone is reported as missing only.
  if (out.some((i) => i.type === "unit" && i.kind === "missing")) return out;
  const want = u.name === agentUnitName || u.enable !== false;
  const state = (await deps.systemd.unitProperties(u.name, signal)).unitFileState;
  if ((want && disabledStates.has(state)) || (!want && enabledStates.has(state) && state !== "static")) {
    out.push({ type: "enablement", path: u.name, kind: "enablement", unit: u.name, want });
  }
  return out;
}

/**
 * Compares every file, unit file and drop-in of `lastApplied` (content and mode) and every unit's
 * enablement with the host. Read-only. Sorted by path.
 */
export async function detectDrift(deps: DetectDeps, lastApplied: Osc, hostName: string, signal: AbortSignal): Promise<DriftItem[]> {
  const items = await fileDrift(deps, allFiles(lastApplied, hostName), signal);
  for (const u of mergeUnits(lastApplied)) {
    signal.throwIfAborted();
    items.push(...(await unitDrift(deps, u, signal)));
  }
  return items.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** "/etc/a (content)": how `status` and the messages name a drifted path. */
export const driftLabels = (items: readonly DriftItem[]): string[] => items.map((i) => `${i.path} (${i.kind})`);

/** "/etc/a (content), kubelet.service (enablement), … and 5 more" — at most `limit` paths named. */
export function nameSome(labels: readonly string[], limit = 20): string {
  const more = labels.length > limit ? ` and ${labels.length - limit} more` : "";
  return `${labels.slice(0, limit).join(", ")}${more}`;
}
