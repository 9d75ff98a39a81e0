import { kubeTime } from "../../../../kube/index.ts";

/**
 * Maintenance windows of the Node annotation (issue 26): `Mon-Fri 02:00-04:00 Europe/Berlin, Sat 22:00-02:00 UTC`.
 * A window is a wall-clock range in its zone: an instant is inside when its local weekday and time are.
 * So across DST a window is shorter or longer by the shift, and one lying wholly in a skipped hour does
 * not open that day. An end at or before the start runs past midnight into the next day; `24:00` ends
 * at midnight.
 */

const dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"] as const;
const minute = 60_000;
const hour = 60 * minute;

export interface MaintenanceWindow {
  /** ISO weekdays the window starts on, 1 = Monday … 7 = Sunday. */
  readonly days: ReadonlySet<number>;
  /** Minutes after local midnight; `end` may be 1440 (24:00). */
  readonly start: number;
  readonly end: number;
  readonly zone: string;
  /** As written, trimmed: for messages. */
  readonly text: string;
}

/** The annotation cannot be read; the message says which window and what, never the value. */
export class WindowSyntaxError extends Error {
  override readonly name = "WindowSyntaxError";
}

const dayOf = (s: string): number | undefined => {
  const i = (dayNames as readonly string[]).indexOf(s);
  return i < 0 ? undefined : i + 1;
};

const timeOf = (s: string, allow24: boolean): number | undefined => {
  const m = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(s);
  if (m === null) return undefined;
  const t = Number(m[1]) * 60 + Number(m[2]);
  return t > 1440 || (t === 1440 && !allow24) ? undefined : t;
};

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      weekday: "short",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(zone, f);
  }
  return f;
}

/** A zone the runtime knows (IANA names such as Europe/Berlin, and UTC). */
function validZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/** Parses the annotation value: windows separated by `,`, each `<day>[-<day>] <HH:MM>-<HH:MM> <zone>`. */
export function parseMaintenanceWindows(value: string): MaintenanceWindow[] {
  const parts = value.split(",");
  return parts.map((raw, i) => {
    const where = parts.length === 1 ? "the window" : `window ${i + 1}`;
    const fail = (what: string): never => {
      throw new WindowSyntaxError(`${where}: ${what}`);
    };
    const text = raw.trim();
    const fields = text.split(/\s+/).filter((f) => f !== "");
    if (fields.length !== 3) fail("expected <day>[-<day>] <HH:MM>-<HH:MM> <time zone>, e.g. Mon-Fri 02:00-04:00 Europe/Berlin");
    const [dayField, timeField, zone] = fields as [string, string, string];
    const [from, to, ...moreDays] = dayField.split("-");
    const first = dayOf(from ?? "");
    const last = to === undefined ? first : dayOf(to);
    if (first === undefined || last === undefined || moreDays.length > 0) fail("the day must be one of Mon…Sun, or a range like Mon-Fri");
    const days = new Set<number>();
    for (let d = first as number; ; d = (d % 7) + 1) {
      days.add(d);
      if (d === last) break;
    }
    const [startText, endText, ...moreTimes] = timeField.split("-");
    const start = timeOf(startText ?? "", false);
    const end = timeOf(endText ?? "", true);
    if (start === undefined || end === undefined || moreTimes.length > 0) fail("the times must be 24-hour HH:MM-HH:MM, e.g. 02:00-04:00");
    if (start === end) fail("start and end are the same time");
    if (!validZone(zone)) fail("unknown time zone (an IANA name such as Europe/Berlin, or UTC)");
    return { days, start: start as number, end: end as number, zone, text: fields.join(" ") };
  });
}

interface Local {
  /** ISO weekday, 1 = Monday. */
  readonly weekday: number;
  /** Minutes after local midnight. */
  readonly minutes: number;
  /** The local date and time read as if it were UTC (ms): tells how far the zone is ahead of UTC. */
  readonly asUtc: number;
  readonly date: string;
}

function local(zone: string, ms: number): Local {
  const parts: Record<string, string> = {};
  for (const p of formatter(zone).formatToParts(ms)) parts[p.type] = p.value;
  const n = (k: string) => Number(parts[k]);
  const asUtc = Date.UTC(n("year"), n("month") - 1, n("day"), n("hour"), n("minute"), n("second"));
  return {
    weekday: (dayOf(parts["weekday"] ?? "") ?? 1) as number,
    minutes: n("hour") * 60 + n("minute"),
    asUtc,
    date: `${parts["year"]}-${parts["month"]}-${parts["day"]}`,
  };
}

const previousDay = (d: number): number => ((d + 5) % 7) + 1;

/** `ms` lies inside `w`: on a start day from start on, or (past midnight) on the next day before the end. */
export function insideWindow(w: MaintenanceWindow, ms: number): boolean {
  const t = local(w.zone, ms);
  if (w.start < w.end) return w.days.has(t.weekday) && t.minutes >= w.start && t.minutes < w.end;
  return (w.days.has(t.weekday) && t.minutes >= w.start) || (w.days.has(previousDay(t.weekday)) && t.minutes < w.end);
}

/**
 * The first instant whose local wall clock reads `target` (a local time read as UTC ms) or later: in a
 * skipped hour the moment it ends, in a repeated hour the first pass. Minute precision.
 */
function firstInstantAtOrAfter(zone: string, target: number): number {
  const reached = (ms: number) => local(zone, ms).asUtc >= target;
  // Zones are between UTC-12 and UTC+14: the instant lies within these bounds.
  const search = (lo: number, hi: number) => {
    while (hi - lo > minute) {
      const mid = lo + Math.floor((hi - lo) / minute / 2) * minute;
      if (reached(mid)) hi = mid;
      else lo = mid;
    }
    return hi;
  };
  const lo = target - 15 * hour;
  const found = search(lo, target + 13 * hour);
  // Wall clocks step back once a day at most: an earlier pass, if any, lies an hour or so before.
  for (const back of [hour, 2 * hour]) if (reached(found - back)) return search(lo, found - back);
  return found;
}

/** Local midnight of the day `days` after the one `ms` falls on, read as UTC ms. */
const localMidnight = (zone: string, ms: number, days: number): number => {
  const d = new Date(`${local(zone, ms).date}T00:00:00Z`).getTime();
  return d + days * 24 * hour;
};

/** The next instant at or after `nowMs` at which one of `windows` is open; undefined when none opens within 8 days. */
export function nextOpening(windows: readonly MaintenanceWindow[], nowMs: number): { atMs: number; window: MaintenanceWindow } | undefined {
  let best: { atMs: number; window: MaintenanceWindow } | undefined;
  for (const w of windows) {
    if (insideWindow(w, nowMs)) return { atMs: nowMs, window: w };
    for (let day = -1; day <= 8; day++) {
      const midnight = localMidnight(w.zone, nowMs, day);
      const weekday = new Date(midnight).getUTCDay() || 7;
      if (!w.days.has(weekday)) continue;
      const at = firstInstantAtOrAfter(w.zone, midnight + w.start * minute);
      if (at < nowMs || !insideWindow(w, at)) continue;
      if (best === undefined || at < best.atMs) best = { atMs: at, window: w };
      break;
    }
  }
  return best;
}

/** "Mon 2026-11-30 02:00 Europe/Berlin (2026-11-30T01:00:00Z)" */
export function openingText(w: MaintenanceWindow, atMs: number): string {
  const t = local(w.zone, atMs);
  const hhmm = `${String(Math.floor(t.minutes / 60)).padStart(2, "0")}:${String(t.minutes % 60).padStart(2, "0")}`;
  return `${dayNames[t.weekday - 1]} ${t.date} ${hhmm} ${w.zone} (${kubeTime(atMs)})`;
}
