import type { ApplyRecord, ApplyStatus, GateRecord } from "../controllers/operatingsystemconfig/index.ts";
import type { HostFs } from "../host/index.ts";
import type { KubeObject } from "../kube/index.ts";
import { errorText } from "../log/index.ts";
import type { OscChanges } from "../osc/index.ts";
import type { Systemd } from "../systemd/index.ts";

/** Everything `status` shows; `-o json` prints it as is. */
export interface StatusReport {
  readonly secret: string;
  /** last-applied-osc.yaml exists (the node has applied an OSC completely at least once). */
  readonly lastAppliedFile: boolean;
  /**
   * What the state files alone say is applied (an image root from `apply --offline`, a node the Go agent
   * ran): the checksum of a change set with no work left, and when last-applied-osc.yaml was written.
   */
  readonly appliedOnDisk?: { readonly checksum: string; readonly at: string };
  readonly lastSuccess?: ApplyRecord;
  readonly lastApply?: ApplyRecord;
  readonly lastFailure?: ApplyRecord;
  readonly pending: {
    /** The changes file still lists work (an interrupted or failed apply resumes it). */
    readonly changeSet?: {
      readonly checksum: string;
      readonly filesToWrite: number;
      readonly filesToDelete: number;
      readonly unitsToApply: number;
      readonly unitsToRemove: number;
      readonly unitCommands: readonly string[];
      readonly agentRestart: boolean;
    };
    readonly gate?: GateRecord;
    readonly secretMissingSince?: string;
    /** Versions staged besides the last applied one (issue 23): "<checksum prefix>: staged (…)". */
    readonly staging?: readonly { readonly checksum: string; readonly state: string; readonly text: string }[];
  };
  /** The disruption policy file on the node (issue 26), when there is one: its rules, or why it is ignored. */
  readonly disruptionPolicy?: { readonly path: string; readonly rules: readonly string[]; readonly error?: string };
  /** State files that could not be read (the rest of the status is still shown). */
  readonly problems: readonly string[];
  readonly units: readonly UnitState[];
  readonly unitsError?: string;
  readonly node?: NodeView;
  readonly nodeError?: string;
}

export interface UnitState {
  readonly name: string;
  readonly enabled: string;
  readonly active: string;
  readonly sub: string;
}

export interface NodeView {
  readonly name: string;
  readonly condition?: { readonly status: string; readonly reason: string; readonly message: string; readonly since: string };
  readonly checksum?: string;
  /** checksum/data-script of the OSC Secret: the version the node should run. */
  readonly secretChecksum?: string;
  readonly hold?: string;
  /** node-agent.gardener.cloud/maintenance-window as set on the Node. */
  readonly maintenanceWindow?: string;
  readonly history?: readonly Record<string, unknown>[];
}

function changeSetOf(c: OscChanges | undefined): StatusReport["pending"]["changeSet"] {
  if (c === undefined) return undefined;
  const commands = c.units.commands.map((u) => `${u.command || "apply"} ${u.name}`);
  const work =
    c.files.changed.length +
    c.files.deleted.length +
    c.units.changed.length +
    c.units.deleted.length +
    commands.length +
    (c.containerd.configFileChanged ? 1 : 0) +
    (c.mustRestartNodeAgent ? 1 : 0);
  if (work === 0) return undefined;
  return {
    checksum: c.operatingSystemConfigChecksum,
    filesToWrite: c.files.changed.length,
    filesToDelete: c.files.deleted.length,
    unitsToApply: c.units.changed.length,
    unitsToRemove: c.units.deleted.length,
    unitCommands: commands,
    agentRestart: c.mustRestartNodeAgent,
  };
}

/** RFC 3339 modification time of a file (seconds precision, like the apply records). */
async function modifiedAt(realPath: string): Promise<string> {
  const { stat } = await import("node:fs/promises");
  const { kubeTime } = await import("../kube/index.ts");
  return kubeTime((await stat(realPath)).mtimeMs);
}

/** The local part: state files of the agent (no API server, no systemd). */
export async function localStatus(host: HostFs, secretFromConfig: string | undefined): Promise<Omit<StatusReport, "units">> {
  const { readApplyStatus } = await import("../controllers/operatingsystemconfig/report/apply-status.ts");
  const { readChanges } = await import("../controllers/operatingsystemconfig/plan/state.ts");
  const { lastAppliedPath } = await import("../controllers/shared/index.ts");
  const { listStageRecords, stageStateText } = await import("../controllers/operatingsystemconfig/stage/index.ts");
  const problems: string[] = [];
  // A damaged file is a finding to show, not a reason to show nothing.
  const status: ApplyStatus | undefined = await readApplyStatus(host).catch((err: unknown) => void problems.push(errorText(err)));
  const changes = await readChanges(host).catch((err: unknown) => void problems.push(`changes file: ${errorText(err)}`));
  const changeSet = changeSetOf(changes);
  const { diskDisruptionPolicy, disruptionPolicyPath, ruleText } = await import(
    "../controllers/operatingsystemconfig/plan/disruption-policy.ts"
  );
  const policy = await diskDisruptionPolicy(host).catch((err: unknown) => void problems.push(`disruption policy: ${errorText(err)}`));
  const disruptionPolicy =
    policy === undefined || policy.kind === "none"
      ? undefined
      : {
          path: disruptionPolicyPath,
          rules: policy.kind === "ok" ? policy.policy.rules.map(ruleText) : [],
          ...(policy.kind === "invalid" ? { error: policy.error } : {}),
        };
  const lastAppliedFile = (await host.stat(lastAppliedPath)) !== undefined;
  // A finished change set names the version last-applied-osc.yaml holds; an unfinished one does not.
  const finished = lastAppliedFile && changes !== undefined && changeSet === undefined ? changes.operatingSystemConfigChecksum : "";
  const appliedOnDisk = finished === "" ? undefined : { checksum: finished, at: await modifiedAt(host.resolve(lastAppliedPath)) };
  const current = status?.lastSuccess?.checksum ?? appliedOnDisk?.checksum;
  const staging = (await listStageRecords(host))
    .filter((r) => r.checksum !== current)
    .map((r) => ({ checksum: r.checksum, state: r.state, text: stageStateText(r) }));
  return {
    secret: secretFromConfig ?? status?.secret ?? "",
    lastAppliedFile,
    ...(appliedOnDisk !== undefined ? { appliedOnDisk } : {}),
    ...(disruptionPolicy !== undefined ? { disruptionPolicy } : {}),
    problems,
    ...(status?.lastSuccess !== undefined ? { lastSuccess: status.lastSuccess } : {}),
    ...(status?.lastApply !== undefined ? { lastApply: status.lastApply } : {}),
    ...(status?.lastFailure !== undefined ? { lastFailure: status.lastFailure } : {}),
    pending: {
      ...(changeSet !== undefined ? { changeSet } : {}),
      ...(status?.gate !== undefined ? { gate: status.gate } : {}),
      ...(status?.secretMissingSince !== undefined ? { secretMissingSince: status.secretMissingSince } : {}),
      ...(staging.length > 0 ? { staging } : {}),
    },
  };
}

/** The units of last-applied with their live state; systemd's error is reported, not thrown. */
export async function unitStates(
  host: HostFs,
  connect: () => Promise<Systemd>,
  signal: AbortSignal,
): Promise<{ units: UnitState[]; error?: string }> {
  const { readLastApplied } = await import("../controllers/shared/index.ts");
  const { mergeUnits } = await import("../controllers/operatingsystemconfig/plan/merge.ts");
  const osc = await readLastApplied(host);
  const names =
    osc === undefined
      ? []
      : mergeUnits(osc)
          .map((u) => u.name)
          .sort();
  if (names.length === 0) return { units: [] };
  let systemd: Systemd | undefined;
  try {
    systemd = await connect();
    const sd = systemd;
    const props = await Promise.all(names.map((n) => sd.unitProperties(n, signal)));
    return {
      units: names.map((name, i) => ({
        name,
        enabled: props[i]?.unitFileState ?? "",
        active: props[i]?.activeState ?? "",
        sub: props[i]?.subState ?? "",
      })),
    };
  } catch (err) {
    // Without systemd the rest of the status is still worth showing.
    return {
      units: names.map((name) => ({ name, enabled: "?", active: "?", sub: "?" })),
      error: `systemd not reachable: ${errorText(err)}`,
    };
  } finally {
    systemd?.close();
  }
}

/** The Node's view: the OSC condition, checksum, hold and history annotations. */
export async function nodeView(node: KubeObject, secret: KubeObject | undefined): Promise<NodeView> {
  const { findOscCondition } = await import("../controllers/operatingsystemconfig/report/condition.ts");
  const { parseHistory, applyHistoryAnnotation } = await import("../controllers/operatingsystemconfig/report/history.ts");
  const { holdReason } = await import("../controllers/operatingsystemconfig/features/hold/gate.ts");
  const { checksumAnnotation } = await import("../controllers/operatingsystemconfig/constants.ts");
  const c = findOscCondition(node);
  const annotations = node.metadata.annotations ?? {};
  const hold = holdReason(node);
  const window = annotations["node-agent.gardener.cloud/maintenance-window"];
  const history = parseHistory(annotations[applyHistoryAnnotation]);
  const secretChecksum = secret?.metadata.annotations?.["checksum/data-script"];
  return {
    name: node.metadata.name ?? "",
    ...(c !== undefined
      ? { condition: { status: c.status ?? "", reason: c.reason ?? "", message: c.message ?? "", since: c.lastTransitionTime ?? "" } }
      : {}),
    ...(annotations[checksumAnnotation] !== undefined ? { checksum: annotations[checksumAnnotation] } : {}),
    ...(secretChecksum !== undefined ? { secretChecksum } : {}),
    ...(hold !== undefined ? { hold } : {}),
    ...(window !== undefined ? { maintenanceWindow: window } : {}),
    ...(history.length > 0 ? { history } : {}),
  };
}
