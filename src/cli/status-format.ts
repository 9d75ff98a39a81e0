import type { ApplyRecord } from "../controllers/operatingsystemconfig/index.ts";
import type { StatusReport } from "./status-gather.ts";

const short = (checksum: string): string => checksum.slice(0, 12);
const seconds = (ms: number | undefined): string => (ms === undefined ? "" : `${(ms / 1000).toFixed(1)}s`);
const row = (key: string, value: string): string => `  ${key.padEnd(14)}${value}`;

function applyLine(r: ApplyRecord): string {
  // A Secret without checksum/data-script is recorded as a failure with an empty checksum.
  const parts = [
    r.checksum === "" ? "(no checksum)" : short(r.checksum),
    r.outcome.toLowerCase(),
    `at ${r.startedAt.replace(/\.\d{3}Z$/, "Z")}`,
  ];
  if (r.durationMs !== undefined) parts.push(`took ${seconds(r.durationMs)}`);
  if (r.filesChanged !== undefined) parts.push(`${r.filesChanged} file(s) changed, ${r.filesDeleted ?? 0} deleted`);
  if (r.unitsRestarted !== undefined && r.unitsRestarted.length > 0) parts.push(`restarts ${r.unitsRestarted.join(", ")}`);
  return parts.join(", ");
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    `  ${cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd()}`;
  return [line(header), ...rows.map(line)];
}

/** The human form of `status`: applied, pending, last failure, units, the Node's view. */
export function formatStatus(s: StatusReport): string {
  const out = ["Operating system config"];
  out.push(row("Secret", s.secret || "(unknown)"));
  out.push(
    row(
      "Applied",
      s.lastSuccess !== undefined
        ? applyLine(s.lastSuccess)
        : s.appliedOnDisk !== undefined
          ? `${short(s.appliedOnDisk.checksum)}, applied, at ${s.appliedOnDisk.at} (from the state files: no apply record by this agent)`
          : s.lastAppliedFile
            ? "yes (no apply record by this agent yet)"
            : "nothing yet",
    ),
  );
  if (s.lastApply !== undefined && s.lastApply.outcome === "Applying") out.push(row("Applying", applyLine(s.lastApply)));
  const p = s.pending;
  const pending: string[] = [];
  if (p.changeSet !== undefined) {
    const c = p.changeSet;
    pending.push(
      `resumable change set ${short(c.checksum)}: ${c.filesToWrite} file(s) to write, ${c.filesToDelete} to delete, ${c.unitsToApply} unit(s) to apply, ` +
        `${c.unitsToRemove} to remove${c.unitCommands.length > 0 ? `, then ${c.unitCommands.join(", ")}` : ""}${c.agentRestart ? ", agent restart" : ""}`,
    );
  }
  if (p.gate !== undefined) pending.push(`${p.gate.reason} since ${p.gate.since}: ${p.gate.message}`);
  for (const st of p.staging ?? []) pending.push(`staging of ${short(st.checksum)}: ${st.text}`);
  if (p.secretMissingSince !== undefined) pending.push(`SecretMissing since ${p.secretMissingSince}: the OSC Secret does not exist`);
  out.push(row("Pending", pending.length === 0 ? "nothing" : (pending[0] ?? "")));
  for (const more of pending.slice(1)) out.push(row("", more));
  const f = s.lastFailure;
  out.push(row("Last failure", f === undefined ? "none" : `${applyLine(f)}: ${f.failure?.message ?? ""}`));
  for (const problem of s.problems) out.push(row("Unreadable", problem));
  const d = s.disruptionPolicy;
  if (d !== undefined) {
    if (d.error !== undefined) out.push(row("Disruption", `policy ignored (changed units restart): ${d.error}`));
    else {
      out.push(row("Disruption", `policy ${d.path}: ${d.rules.length} rule${d.rules.length === 1 ? "" : "s"}, first match wins`));
      for (const r of d.rules) out.push(row("", r));
    }
  }

  out.push("", "Units (live state from systemd)");
  if (s.units.length === 0) out.push("  none applied yet");
  else
    out.push(
      ...table(
        ["UNIT", "ENABLED", "ACTIVE", "SUB"],
        s.units.map((u) => [u.name, u.enabled, u.active, u.sub]),
      ),
    );
  if (s.unitsError !== undefined) out.push(`  (${s.unitsError})`);

  if (s.node !== undefined) {
    const n = s.node;
    out.push("", `Node ${n.name} (API server)`);
    const c = n.condition;
    out.push(
      row("Condition", c === undefined ? "OperatingSystemConfigApplied not set" : `${c.status}/${c.reason} since ${c.since}: ${c.message}`),
    );
    const wanted =
      n.secretChecksum === undefined
        ? " (the OSC Secret does not exist)"
        : n.secretChecksum === n.checksum
          ? " (= the Secret's)"
          : `, the Secret has ${short(n.secretChecksum)}`;
    out.push(row("Checksum", `${n.checksum === undefined ? "(none)" : short(n.checksum)}${wanted}`));
    out.push(row("Hold", n.hold ?? "none"));
    if (n.maintenanceWindow !== undefined) out.push(row("Window", n.maintenanceWindow));
    if (n.history !== undefined) {
      out.push("  History");
      out.push(
        ...table(
          ["CHECKSUM", "START", "DURATION", "FILES", "DELETED", "RESTARTED", "OUTCOME"],
          n.history.map((h) => [
            String(h["checksum"] ?? ""),
            String(h["start"] ?? ""),
            seconds(Number(h["durationMs"] ?? 0)),
            String(h["filesChanged"] ?? 0),
            String(h["filesDeleted"] ?? 0),
            [
              ...((h["unitsRestarted"] as string[] | undefined) ?? []),
              ...(h["moreUnits"] !== undefined ? [`+${String(h["moreUnits"])}`] : []),
            ].join(",") || "-",
            String(h["outcome"] ?? ""),
          ]),
        ).map((l) => `  ${l}`),
      );
    }
  } else if (s.nodeError !== undefined) {
    out.push("", `Node: not shown (${s.nodeError})`);
  }
  return `${out.join("\n")}\n`;
}
