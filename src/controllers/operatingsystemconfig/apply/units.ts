import type { FileWrite } from "../../../host/index.ts";
import { nodeRef } from "../../events.ts";
import type { StepContext } from "./context.ts";
import type { UnitDisruption } from "../plan/disruption.ts";
import { agentUnitName, containerdUnitName, unitDir } from "../constants.ts";
import { errorText } from "../../../log/index.ts";

const enc = new TextEncoder();

const sameBytes = (a: Uint8Array | undefined, b: Uint8Array): boolean =>
  a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Step 16 (§6.3), the reading part: unit files and drop-ins whose bytes differ (to be written); the others
 * get chmod 0600 unless they have that mode. Writes nothing else, so it may run alongside steps 13-15 (apply/run.ts).
 */
export async function readUnitFiles(ctx: StepContext): Promise<FileWrite[]> {
  const { host } = ctx.ports;
  const wanted: { path: string; content: string }[] = [];
  for (const u of ctx.store.changes.units.changed) {
    const p = `${unitDir}/${u.name}`;
    if (u.content !== undefined) wanted.push({ path: p, content: u.content });
    if ((u.dropIns ?? []).length === 0) continue;
    for (const d of u.dropInsChanges.changed) wanted.push({ path: `${p}.d/${d.name}`, content: d.content });
  }
  const current = await settleAll(wanted.map((w) => host.readFileAndMode(w.path)));
  const writes: FileWrite[] = [];
  const unchanged: string[] = [];
  wanted.forEach((w, i) => {
    const want = enc.encode(w.content);
    const now = current[i];
    // A file that is 0600 already is left alone (a chmod would still update its inode's ctime).
    if (sameBytes(now?.bytes, want)) {
      if (now?.mode !== 0o600) unchanged.push(w.path);
    } else writes.push({ path: w.path, data: want, mode: 0o600 });
  });
  await settleAll(unchanged.map((path) => host.chmod(path, 0o600)));
  return writes;
}

/**
 * Step 16 (§6.3): unit files, then enable/disable, all idempotent so recorded as one group.
 * `opts.afterEnableSent` runs once those calls are sent, before their replies (not when none or a step failed).
 */
export async function applyChangedUnits(
  ctx: StepContext,
  opts: { readonly afterEnableSent?: (() => void) | undefined; readonly unitFilesRead?: Promise<FileWrite[]> | undefined } = {},
): Promise<void> {
  const { host, systemd, log } = ctx.ports;
  const units = [...ctx.store.changes.units.changed];
  if (units.length === 0) {
    await opts.unitFilesRead; // nothing to read then; settled all the same
    return;
  }
  ctx.signal.throwIfAborted();
  // Drop-in directories set up or removed, unit files and drop-ins whose bytes differ written together
  // (0600, durable when written), removed drop-ins deleted. readUnitFiles runs here unless run.ts started it.
  const writes = await (opts.unitFilesRead ?? readUnitFiles(ctx));
  for (const u of units) {
    const p = `${unitDir}/${u.name}`;
    if ((u.dropIns ?? []).length === 0) await host.removeAll(`${p}.d`);
    else await host.ensureDir(`${p}.d`, 0o755);
  }
  await host.writeFilesAtomic(writes);
  for (const u of units) {
    if ((u.dropIns ?? []).length === 0) continue;
    for (const d of u.dropInsChanges.deleted) await host.remove(`${unitDir}/${u.name}.d/${d.name}`);
  }
  ctx.signal.throwIfAborted();
  // One EnableUnitFiles and one DisableUnitFiles call for all units: systemd checks every named unit
  // before it links any (all or nothing, the error names the unit) and reloads its unit-file state once
  // per call, not once per unit. The agent's own unit is always enabled, whatever the OSC says (§6.3).
  const enabled = units.filter((u) => u.name === agentUnitName || u.enable !== false).map((u) => u.name);
  const disabled = units.filter((u) => u.name !== agentUnitName && u.enable === false).map((u) => u.name);
  const calls = [
    enabled.length > 0 ? systemd.enable(enabled, ctx.signal) : undefined,
    disabled.length > 0 ? systemd.disable(disabled, ctx.signal) : undefined,
  ];
  opts.afterEnableSent?.();
  await settleAll(calls);
  for (const u of units) log.info("Applied unit", { unitName: u.name });
  // Written with the next record (the first unit command's at the latest): redoing all of this is harmless.
  await ctx.store.unitsChangedDone(
    units.map((u) => u.name),
    { deferred: true },
  );
}

/** Promise.all that lets every promise settle before it rethrows the first failure (nothing left running). */
async function settleAll<T>(promises: readonly (Promise<T> | undefined)[]): Promise<(T | undefined)[]> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r) => r.status === "rejected");
  if (failed !== undefined) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T | undefined>).value);
}

/** Step 17 (§6.4): units no longer in the OSC. */
export async function removeDeletedUnits(ctx: StepContext): Promise<void> {
  const { host, systemd, log } = ctx.ports;
  const actions = ctx.unitJobs?.actions(ctx.store.changes);
  for (const u of [...ctx.store.changes.units.deleted]) {
    ctx.signal.throwIfAborted();
    const p = `${unitDir}/${u.name}`;
    const createdByAgent = u.content !== undefined;
    const exists = (await host.stat(p)) !== undefined;
    if (exists && createdByAgent) {
      await systemd.disable([u.name], ctx.signal);
      await runJob(ctx, "stop", u.name);
      await host.remove(p);
    }
    if ((await host.stat(`${p}.d`))?.kind === "dir") {
      for (const d of u.dropIns ?? []) await host.remove(`${p}.d/${d.name}`);
      if ((await host.list(`${p}.d`))?.length === 0) await host.removeAll(`${p}.d`);
    }
    // An OS-provided unit is restarted so it drops the removed drop-ins (only /etc/systemd/system is checked, like upstream).
    if (exists && !createdByAgent) await restartAsDecided(ctx, actions, u.name);
    log.info("Removed unit", { unitName: u.name });
    await ctx.store.unitDeletedDone(u.name);
  }
}

/**
 * restart/stop with the Node event of §6.9 (none while the Node is unknown). `record` (the completion
 * bookkeeping) runs while the success event is being written: events share the client's rate limit
 * (5 QPS) and may wait for a token, the record should not wait behind them.
 */
export async function runJob(
  ctx: StepContext,
  op: "restart" | "stop" | "reload",
  unit: string,
  record?: () => Promise<void>,
): Promise<void> {
  const { systemd, events } = ctx.ports;
  const { reason, action } = jobEvent[op];
  try {
    await systemd[op](unit, ctx.signal);
  } catch (err) {
    if (ctx.node !== undefined) {
      await events.event(nodeRef(ctx.node), "Warning", reason, action, `failed ${op} of unit ${unit}: ${errorText(err)}`);
    }
    throw err;
  }
  // The recorder never throws (best effort), so only the record can fail here.
  const event =
    ctx.node === undefined ? undefined : events.event(nodeRef(ctx.node), "Normal", reason, action, `processed ${op} of unit ${unit}`);
  await settleAll([record?.(), event]);
}

const jobEvent = {
  restart: { reason: "SystemDUnitRestart", action: "Restart" },
  stop: { reason: "SystemDUnitStop", action: "Stop" },
  reload: { reason: "SystemDUnitReload", action: "Reload" },
} as const;

/**
 * A restart the change set asks for, as the disruption policy says (ctx.unitJobs): a restart, a reload, or
 * nothing (none, daemon-reload: the apply's daemon-reload already ran). `actions` is read once per step.
 */
async function restartAsDecided(
  ctx: StepContext,
  actions: ReadonlyMap<string, UnitDisruption> | undefined,
  unit: string,
  record?: () => Promise<void>,
): Promise<void> {
  const decided = actions?.get(unit);
  const action = decided?.action ?? "restart";
  if (action === "restart" || action === "reload" || action === "stop") return runJob(ctx, action, unit, record);
  ctx.ports.log.info("Not restarting unit, as the disruption policy says", {
    unitName: unit,
    action,
    ...(decided?.rule !== undefined ? { rule: decided.rule.index, line: decided.rule.line } : {}),
  });
  await record?.();
}

const asError = (x: unknown): Error => (x instanceof Error ? x : new Error(String(x)));

export class UnitCommandsError extends Error {
  override readonly name = "UnitCommandsError";
  constructor(readonly errors: readonly Error[]) {
    super(errors.map((e) => e.message).join("; "), { cause: errors[0] });
  }
}

/** Step 20 (§6.7, §7.5): all unit commands concurrently, plus the containerd restart a config change needs. */
export async function executeUnitCommands(ctx: StepContext): Promise<void> {
  const { log } = ctx.ports;
  const cmds = [...ctx.store.changes.units.commands];
  const actions = ctx.unitJobs?.actions(ctx.store.changes);
  const jobs: Promise<void>[] = cmds.map(async ({ name, command }) => {
    const record = async () => {
      log.info("Executed unit command", { unitName: name, command });
      await ctx.store.unitCommandDone(name);
      if (name === containerdUnitName && command === "restart") await ctx.store.containerdRestarted();
    };
    if (command === "restart") await restartAsDecided(ctx, actions, name, record);
    else if (command === "stop") await runJob(ctx, command, name, record);
    else if (command !== "") throw new Error(`unknown unit command "${command}" for unit ${name}`);
    else await record();
  });
  if (ctx.store.changes.containerd.configFileChanged && !cmds.some((c) => c.name === containerdUnitName)) {
    jobs.push(
      restartAsDecided(ctx, actions, containerdUnitName, async () => {
        log.info("Restarted containerd for its changed configuration");
        await ctx.store.containerdRestarted();
      }),
    );
  }
  const results = await Promise.allSettled(jobs);
  const errors = results.flatMap((r) => (r.status === "rejected" ? [asError(r.reason)] : []));
  if (errors.length > 0) {
    // When no command succeeded, the units' deferred completion is still unwritten: keep it, so the
    // retry does only the failed work (§4 scenario 2). A failing write joins the reported errors.
    await ctx.store.flush().catch((err: unknown) => errors.push(asError(err)));
    throw new UnitCommandsError(errors);
  }
}
