import type { TokenSyncConfig } from "../../../config/index.ts";
import type { Osc, Unit } from "../../../osc/index.ts";
import { nodeRef } from "../../events.ts";
import type { StepContext } from "./context.ts";
import { mergeUnits } from "../plan/merge.ts";
import { errorText } from "../../../log/index.ts";

const tokenNotReadyReason = "TokenNotWrittenBeforeUnit";

/** Token sync paths a unit reads: named in its filePaths, its content or one of its drop-ins. */
export function tokenPathsReadBy(unit: Unit, syncConfigs: readonly TokenSyncConfig[]): TokenSyncConfig[] {
  const texts = [unit.content ?? "", ...(unit.dropIns ?? []).map((d) => d.content)];
  return syncConfigs.filter((s) => (unit.filePaths ?? []).includes(s.path) || texts.some((t) => t.includes(s.path)));
}

/**
 * gardener#15028: a unit must not start before the (concurrent, maybe slower) token controller wrote the
 * token file it reads, so missing ones are written now through its sync. A failure is reported and the
 * unit started anyway, as upstream would.
 */
export async function writeTokensBeforeUnits(ctx: StepContext, osc: Osc): Promise<void> {
  const { host, log, events, config, writeTokenFile } = ctx.ports;
  if (writeTokenFile === undefined || config.tokenSyncConfigs.length === 0) return;
  const starting = new Set(ctx.store.changes.units.commands.filter((c) => c.command === "restart").map((c) => c.name));
  const needed = new Map<string, TokenSyncConfig>();
  for (const u of mergeUnits(osc)) {
    if (!starting.has(u.name)) continue;
    for (const s of tokenPathsReadBy(u, config.tokenSyncConfigs)) needed.set(s.path, s);
  }
  await Promise.all(
    [...needed.values()].map(async (s) => {
      if ((await host.stat(s.path)) !== undefined) return;
      try {
        await writeTokenFile({ namespace: "kube-system", name: s.secretName }, ctx.signal);
        log.info("Wrote token file before starting the units that read it", { path: s.path, secret: s.secretName });
      } catch (err) {
        const message = `token file ${s.path} (secret kube-system/${s.secretName}) could not be written before the units that read it start: ${errorText(err)}`;
        log.error("Token file not written before its units", { path: s.path, error: errorText(err) });
        if (ctx.node !== undefined) await events.event(nodeRef(ctx.node), "Warning", tokenNotReadyReason, "Reconcile", message);
      }
    }),
  );
}
