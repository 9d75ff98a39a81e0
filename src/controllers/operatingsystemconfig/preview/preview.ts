import type { HostFs } from "../../../host/index.ts";
import type { Kube } from "../../../kube/index.ts";
import type { ChangedUnit, Osc, OscChanges, OscFile } from "../../../osc/index.ts";
import { envDropInName } from "../plan/env-dropin.ts";
import { readStageRecord, stageStateText } from "../stage/index.ts";
import { agentUnitName, containerdUnitName, unitDir, checksumAnnotation } from "../constants.ts";
import { planChangeSet } from "../plan/planner.ts";
import type { UnitDisruption } from "../plan/disruption.ts";
import { type DisruptionPreview, previewDisruption, type UnitPolicyPreview, withPolicy } from "./disruption.ts";
import { oscExtensions } from "../plugins.ts";
import { planChanges } from "../plan/content.ts";
import { type GatePreview, type GatePreviewInput, previewGates, unreachable } from "./gates.ts";
import { readLastApplied } from "../plan/state.ts";
import { asText, unifiedDiff } from "../../../text/index.ts";

export interface FilePreview {
  readonly path: string;
  readonly action: "create" | "change" | "delete";
  /** Octal text ("0644"); `from` absent for new files. */
  readonly mode?: { readonly from?: string; readonly to: string };
  readonly size?: { readonly from?: number; readonly to?: number };
  /** Unified diff of the content (not for secretRef files or modes 0600 and stricter). */
  readonly diff?: string;
  /** Said instead of a diff: "content differs, 42 bytes", "content unchanged", "from image …". */
  readonly note?: string;
}

export interface UnitPreview {
  readonly name: string;
  /** In the order the apply does them: write, enable|disable, restart|stop; for removed units stop, disable, remove. */
  readonly actions: readonly string[];
  readonly dropIns: readonly { readonly name: string; readonly action: "create" | "change" | "delete" }[];
  readonly diff?: string;
  /** With a disruption policy: what the restart becomes, why the unit is touched, and the rule that chose it. */
  readonly policy?: UnitPolicyPreview;
}

export interface ApplyPreview {
  readonly checksum: string;
  /** The Node already carries this checksum: the agent does nothing. */
  readonly upToDate: boolean;
  /** The change set is an interrupted apply of the same checksum, resumed. */
  readonly resumed: boolean;
  readonly files: readonly FilePreview[];
  readonly units: readonly UnitPreview[];
  readonly containerdRestart: boolean;
  readonly agentRestart: boolean;
  /** In-place updates the apply would perform (§9.3): "operating system", "kubelet minor version", … */
  readonly inPlace: readonly string[];
  /** Gates that would stop the apply or delay its checksum, and those not checked (offline). */
  readonly gates: readonly GatePreview[];
  /** This version's staging state (stage/, issue 23): "staged (…)", "staging since …", "failed at …: why"; absent when not staged. */
  readonly staging?: string;
  readonly disruption?: DisruptionPreview;
}

/** What the gates' preview reads (`kube` also resolves secretRef files; offline they are listed without content) and the planning's own inputs. */
export type PreviewInput = Omit<GatePreviewInput, "changes"> & {
  /** The agent's PATH for containerd's env drop-in, when last-applied does not show it. */
  readonly processPath: string;
  readonly arch: string;
};

export const hasChanges = (p: ApplyPreview): boolean =>
  !p.upToDate && (p.files.length > 0 || p.units.length > 0 || p.containerdRestart || p.agentRestart || p.inPlace.length > 0);

const octal = (mode: number): string => mode.toString(8).padStart(4, "0");

/** PATH the running agent put into containerd's env drop-in (so a preview from a shell does not differ by PATH). */
function agentPath(lastApplied: Osc | undefined): string | undefined {
  const unit = (lastApplied?.spec.units ?? []).find((u) => u.name === containerdUnitName);
  const content = unit?.dropIns?.find((d) => d.name === envDropInName)?.content;
  return content?.match(/Environment="PATH=\/var\/bin\/containerruntimes:(.*)"/)?.[1];
}

/** The dry run of the next apply: the controller's own planning (look mode) and host reads; nothing written. */
export async function previewApply(input: PreviewInput, signal: AbortSignal): Promise<ApplyPreview> {
  const { host, checksum } = input;
  const empty = { checksum, resumed: false, files: [], units: [], containerdRestart: false, agentRestart: false, inPlace: [], gates: [] };
  if (input.node !== undefined && input.node.metadata.annotations?.[checksumAnnotation] === checksum) return { ...empty, upToDate: true };

  const lastApplied = await readLastApplied(host);
  const processPath = agentPath(lastApplied) ?? input.processPath;
  const req = { osc: input.osc, checksum, hostName: input.hostName, processPath };
  const pending = await planChangeSet(host, req, oscExtensions({}), "look");
  const { changes } = pending;
  const offlineSkipped = (f: OscFile) => input.kube === undefined && f.content.secretRef !== undefined;
  const planned = await planChanges(
    input.kube ?? unreachable<Kube>("no API server in an offline preview"),
    { ...changes, files: { ...changes.files, changed: changes.files.changed.filter((f) => !offlineSkipped(f)) } },
    input.arch,
    signal,
  );

  const files: FilePreview[] = [];
  for (const f of changes.files.changed) files.push(await previewFile(host, f, planned.get(f.path), offlineSkipped(f)));
  for (const f of changes.files.deleted) {
    const st = await host.stat(f.path);
    files.push({
      path: f.path,
      action: "delete",
      ...(st !== undefined ? { size: { from: st.size } } : { note: "already gone" }),
    });
  }

  // A finished change set of this checksum offline (an image root after `apply --offline`): applied.
  const done =
    pending.resumed &&
    input.node === undefined &&
    files.length === 0 &&
    changes.units.changed.length === 0 &&
    changes.units.deleted.length === 0 &&
    changes.units.commands.length === 0 &&
    !changes.containerd.configFileChanged &&
    inPlaceList(changes).length === 0;
  const gates = done ? [] : await previewGates({ ...input, changes }, signal);
  const stageRecord = await readStageRecord(host, checksum);
  const { disruption, byUnit } = await previewDisruption(host, input.osc, { ...pending, lastApplied }, input.hostName);
  return {
    ...(stageRecord !== undefined && !done ? { staging: stageStateText(stageRecord) } : {}),
    ...(disruption !== undefined ? { disruption } : {}),
    checksum,
    upToDate: done,
    resumed: pending.resumed,
    files,
    units: await previewUnits(host, changes, byUnit),
    containerdRestart:
      changes.containerd.configFileChanged || changes.units.commands.some((c) => c.name === containerdUnitName && c.command === "restart"),
    agentRestart: changes.mustRestartNodeAgent || changes.units.commands.some((c) => c.name === agentUnitName),
    inPlace: inPlaceList(changes),
    gates,
  };
}

function inPlaceList(changes: OscChanges): string[] {
  const f = changes.inPlaceUpdates;
  const named: [boolean, string][] = [
    [f.operatingSystem, "operating system update"],
    [f.kubelet.minorVersion, "kubelet minor version"],
    [f.kubelet.config, "kubelet configuration"],
    [f.kubelet.cpuManagerPolicy, "kubelet CPU manager policy"],
    [f.certificateAuthoritiesRotation.kubelet, "kubelet CA rotation"],
    [f.certificateAuthoritiesRotation.nodeAgent, "node agent CA rotation"],
    [f.serviceAccountKeyRotation, "service account key rotation"],
  ];
  return named.filter(([on]) => on).map(([, name]) => name);
}

async function previewFile(host: HostFs, f: OscFile, bytes: Uint8Array | undefined, unresolved: boolean): Promise<FilePreview> {
  const st = await host.stat(f.path);
  const mode = f.permissions ?? 0o600;
  const base = {
    path: f.path,
    action: st === undefined ? ("create" as const) : ("change" as const),
    mode: { ...(st !== undefined ? { from: octal(st.mode) } : {}), to: octal(mode) },
  };
  const image = f.content.imageRef;
  if (bytes === undefined) {
    const note = unresolved
      ? `content from secret ${f.content.secretRef?.name ?? ""} (not resolved offline)`
      : `content from image ${image?.image ?? ""} (${image?.filePathInImage ?? ""}), not pulled for the preview`;
    return { ...base, ...(st !== undefined ? { size: { from: st.size } } : {}), note };
  }
  const size = { ...(st !== undefined ? { from: st.size } : {}), to: bytes.length };
  const old = st === undefined ? new Uint8Array() : ((await host.readFile(f.path)) ?? new Uint8Array());
  if (st !== undefined && Buffer.from(old).equals(Buffer.from(bytes))) return { ...base, size, note: "content unchanged" };
  // Secrets and private files never reach a terminal or a log: only their size is shown.
  const sensitive = f.content.secretRef !== undefined || (mode & 0o077) === 0;
  const oldText = asText(old);
  const newText = asText(bytes);
  if (sensitive || oldText === undefined || newText === undefined) {
    return { ...base, size, note: `${sensitive ? "" : "binary "}content differs, ${bytes.length} bytes` };
  }
  return { ...base, size, diff: unifiedDiff(oldText, newText, st === undefined ? "/dev/null" : f.path, f.path) };
}

async function textDiff(host: HostFs, path: string, content: string): Promise<string> {
  const old = await host.readText(path);
  return unifiedDiff(old ?? "", content, old === undefined ? "/dev/null" : path, path);
}

async function previewUnits(
  host: HostFs,
  changes: OscChanges,
  byUnit: ReadonlyMap<string, UnitDisruption> | undefined,
): Promise<UnitPreview[]> {
  const out: UnitPreview[] = [];
  const commands = new Map(changes.units.commands.map((c) => [c.name, c.command]));
  const changed = new Map<string, ChangedUnit>(changes.units.changed.map((u) => [u.name, u]));
  for (const name of new Set([...changed.keys(), ...commands.keys()])) {
    const u = changed.get(name);
    const actions: string[] = [];
    let diff = "";
    const dropIns: { name: string; action: "create" | "change" | "delete" }[] = [];
    if (u !== undefined) {
      const path = `${unitDir}/${u.name}`;
      if (u.content !== undefined) {
        diff = await textDiff(host, path, u.content);
        if (diff !== "" || (await host.stat(path)) === undefined) actions.push("write");
      }
      actions.push(u.name === agentUnitName || u.enable !== false ? "enable" : "disable");
      for (const d of u.dropInsChanges.changed) {
        const current = await host.readText(`${path}.d/${d.name}`);
        if (current !== d.content) dropIns.push({ name: d.name, action: current === undefined ? "create" : "change" });
        if (current !== d.content) diff += await textDiff(host, `${path}.d/${d.name}`, d.content);
      }
      for (const d of u.dropInsChanges.deleted) dropIns.push({ name: d.name, action: "delete" });
    }
    const cmd = commands.get(name);
    if (cmd === "restart" || cmd === "stop") actions.push(cmd);
    out.push({ name, actions, dropIns, ...(diff !== "" ? { diff } : {}), ...withPolicy(name, actions, byUnit) });
  }
  for (const u of changes.units.deleted) {
    const createdByAgent = u.content !== undefined;
    const actions = createdByAgent ? ["stop", "disable", "remove"] : ["restart"];
    out.push({
      name: u.name,
      actions,
      dropIns: (u.dropIns ?? []).map((d) => ({ name: d.name, action: "delete" as const })),
      ...withPolicy(u.name, actions, byUnit),
    });
  }
  return out;
}
