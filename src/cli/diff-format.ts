import type { ApplyPreview, FilePreview, GateName, GatePreview, UnitPreview } from "../controllers/operatingsystemconfig/index.ts";

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

function unitLines(u: UnitPreview): string[] {
  const lines = [`  ${u.name}: ${u.actions.length > 0 ? u.actions.join(", ") : "no unit action"}`];
  for (const d of u.dropIns) lines.push(`    drop-in ${d.name}: ${d.action}`);
  if (u.diff !== undefined) lines.push(indent(u.diff, "    "));
  return lines;
}

const gateTitles: Readonly<Record<GateName, string>> = {
  hold: "hold",
  "unit-revert": "unit revert",
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
  if (p.containerdRestart) lines.push("containerd: restarts (its configuration or unit changed)");
  if (p.agentRestart) lines.push("Agent: restarts itself after the daemon-reload to continue with its new unit or binary");
  if (p.gates.length > 0) lines.push("Gates:", ...p.gates.map(gateLine));
  else lines.push("Gates: none would hold the apply or its checksum");
  return `${lines.join("\n")}\n`;
}
