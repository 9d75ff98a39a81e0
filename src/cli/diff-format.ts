import type {
  ApplyPreview,
  DisruptionPreview,
  FilePreview,
  GateName,
  GatePreview,
  UnitPolicyPreview,
  UnitPreview,
} from "../controllers/operatingsystemconfig/index.ts";

const indent = (text: string, by: string): string =>
  text
    .trimEnd()
    .split("\n")
    .map((l) => `${by}${l}`)
    .join("\n");

function fileLine(f: FilePreview): string {
  const facts: string[] = [];
  if (f.mode !== undefined)
    facts.push(f.mode.from === undefined || f.mode.from === f.mode.to ? `mode ${f.mode.to}` : `mode ${f.mode.from} → ${f.mode.to}`);
  const { from, to } = f.size ?? {};
  if (from !== undefined && to !== undefined) facts.push(`${from} → ${to} bytes`);
  else if (to !== undefined) facts.push(`${to} bytes`);
  else if (from !== undefined) facts.push(`${from} bytes`);
  const head = `  ${f.action.padEnd(6)} ${f.path}${facts.length > 0 ? ` (${facts.join(", ")})` : ""}`;
  return f.note !== undefined ? `${head}: ${f.note}` : head;
}

/** " [rule 2 (line 5): units [a.service] → reload; file /etc/a changed]" or " [no rule; unit changed]" */
const policyNote = (p: UnitPolicyPreview | undefined): string => (p === undefined ? "" : ` [${p.rule ?? "no rule"}; ${p.why}]`);

function unitLines(u: UnitPreview): string[] {
  const lines = [`  ${u.name}: ${u.actions.length > 0 ? u.actions.join(", ") : "no unit action"}${policyNote(u.policy)}`];
  for (const d of u.dropIns) lines.push(`    drop-in ${d.name}: ${d.action}`);
  if (u.diff !== undefined) lines.push(indent(u.diff, "    "));
  return lines;
}

const gateTitles: Readonly<Record<GateName, string>> = {
  hold: "hold",
  "unit-revert": "unit revert",
  "maintenance-window": "window",
  "disruption-hooks": "approval",
  "blocking-pods": "blocking pods",
  "serial-lock": "serial lock",
  rollout: "rollout",
  drain: "drain",
  "static-pods": "static pods",
};

/** `  serial lock  holds the apply (WaitingForSerialLock): Waiting for …` */
function gateLine(g: GatePreview): string {
  const title = `  ${gateTitles[g.gate].padEnd(11)} `;
  if (g.verdict === "not-checked") return `${title}${g.message}`;
  const what =
    g.verdict === "stops"
      ? "holds the apply"
      : g.reason === "ApplyFailed"
        ? "fails after the files are written"
        : "holds the checksum after the apply";
  return `${title}${what} (${g.reason ?? ""}): ${g.message}`;
}

function disruptionLines(d: DisruptionPreview): string[] {
  const where = d.source === "osc" ? "as the new config delivers it" : "on the node";
  if (d.error !== undefined) return [`Disruption policy (${where}): ignored, ${d.error}; changed units restart as without one`];
  const lines = [`Disruption policy (${where}): ${d.rules.length} rule${d.rules.length === 1 ? "" : "s"}`];
  for (const r of d.rules) lines.push(`  ${r}`);
  lines.push(
    d.disruptive
      ? "  this apply is disruptive (restarts or stops a unit, or an in-place step)"
      : "  this apply disturbs nothing (no unit restarted or stopped, no in-place step)",
  );
  return lines;
}

/** The human form of `diff`: a header, files with their diffs, units, restarts and gates. */
export function formatPreview(p: ApplyPreview, source: string): string {
  const id = p.checksum.slice(0, 12);
  if (p.upToDate) return `${source}: the Node is up to date with operating system config ${id}; nothing to do.\n`;
  const lines = [`${source}: operating system config ${id}${p.resumed ? " (resumes an interrupted apply)" : ""}`];
  if (p.files.length === 0 && p.units.length === 0 && !p.containerdRestart && !p.agentRestart && p.inPlace.length === 0) {
    lines.push("No file or unit changes; the agent would only record this version as applied.");
  }
  if (p.files.length > 0) {
    lines.push("Files:");
    for (const f of p.files) {
      lines.push(fileLine(f));
      if (f.diff !== undefined) lines.push(indent(f.diff, "    "));
    }
  }
  if (p.units.length > 0) {
    lines.push("Units:");
    for (const u of p.units) lines.push(...unitLines(u));
  }
  if (p.inPlace.length > 0) lines.push(`In-place updates: ${p.inPlace.join(", ")}`);
  const containerd = p.disruption?.containerd;
  if (p.containerdRestart && containerd !== undefined && containerd.action !== "restart")
    lines.push(`containerd: ${containerd.action === "none" ? "no restart" : containerd.action}${policyNote(containerd)}`);
  else if (p.containerdRestart) lines.push("containerd: restarts (its configuration or unit changed)");
  if (p.agentRestart) lines.push("Agent: restarts itself after the daemon-reload to continue with its new unit or binary");
  if (p.staging !== undefined) lines.push(`Staging: ${p.staging}`);
  if (p.disruption !== undefined) lines.push(...disruptionLines(p.disruption));
  if (p.gates.length > 0) lines.push("Gates:", ...p.gates.map(gateLine));
  else lines.push("Gates: none would hold the apply or its checksum");
  return `${lines.join("\n")}\n`;
}
