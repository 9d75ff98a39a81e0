import { errorText } from "../../../log/index.ts";
import type { Decision, Gate, GateContext, GateName, GateReason } from "./gate.ts";

/** One gate as `diff` sees it, decided by the gate's own `decide` on what the API server says now. */
export interface GatePreview {
  readonly gate: GateName;
  /**
   * `stops`: nothing of the version is applied while it holds. `after-apply`: the files and units are
   * applied, the checksum annotation waits. `not-checked`: it needs the API server (offline) or could not be read.
   */
  readonly verdict: "stops" | "after-apply" | "not-checked";
  /** The reason the Node condition would show (absent when not checked). */
  readonly reason?: GateReason | "ApplyFailed";
  readonly message: string;
}

export const offlineText = "not checked (offline)";

function verdictOf(gate: Gate, d: Decision): GatePreview[] {
  if (d.kind === "unknown") return [{ gate: gate.name, verdict: "not-checked", message: d.why }];
  if (d.kind === "hold") {
    const verdict = gate.phase === "record" ? "after-apply" : "stops";
    return [{ gate: gate.name, verdict, reason: d.hold.reason, message: d.hold.message }];
  }
  return d.note === undefined ? [] : [{ gate: gate.name, verdict: "after-apply", reason: d.note.reason, message: d.note.message }];
}

/**
 * The dry run of the gate list, in the order the reconcile meets them: each gate's `decide` (never
 * `reserve`) with `ctx.dryRun`. Offline, a gate that needs the API server is not checked; a gate whose
 * objects cannot be read (e.g. forbidden) is reported as not checked, with the reason.
 */
export async function previewGateList(gates: readonly Gate[], ctx: GateContext): Promise<GatePreview[]> {
  const out: GatePreview[] = [];
  for (const gate of gates) {
    if (gate.online === true && !ctx.online) {
      out.push({ gate: gate.name, verdict: "not-checked", message: offlineText });
      continue;
    }
    try {
      out.push(...verdictOf(gate, await gate.decide(ctx)));
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      out.push({ gate: gate.name, verdict: "not-checked", message: `not checked: ${errorText(err)}` });
    }
  }
  return out;
}
