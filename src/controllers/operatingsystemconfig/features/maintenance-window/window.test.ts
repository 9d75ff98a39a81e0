import { describe, expect, test } from "bun:test";
import { insideWindow, nextOpening, openingText, parseMaintenanceWindows, WindowSyntaxError } from "./window.ts";

const at = (iso: string) => Date.parse(iso);
const one = (text: string) => parseMaintenanceWindows(text)[0] as ReturnType<typeof parseMaintenanceWindows>[number];
const opening = (text: string, now: string) => {
  const o = nextOpening(parseMaintenanceWindows(text), at(now));
  return o === undefined ? undefined : new Date(o.atMs).toISOString();
};

describe("parseMaintenanceWindows", () => {
  test("reads days, day ranges (also across Sunday), times and zones, several windows", () => {
    const [a, b, c] = parseMaintenanceWindows(
      "Mon-Fri 02:00-04:00 Europe/Berlin, Sat 22:00-02:00 UTC,Fri-Mon 00:00-24:00 America/New_York",
    );
    expect([...(a?.days ?? [])]).toEqual([1, 2, 3, 4, 5]);
    expect(a).toMatchObject({ start: 120, end: 240, zone: "Europe/Berlin", text: "Mon-Fri 02:00-04:00 Europe/Berlin" });
    expect([...(b?.days ?? [])]).toEqual([6]);
    expect(b).toMatchObject({ start: 1320, end: 120 });
    expect([...(c?.days ?? [])]).toEqual([5, 6, 7, 1]);
    expect(c?.end).toBe(1440);
  });

  test.each([
    ["Mo 02:00-04:00 UTC", "the window: the day must be one of Mon…Sun, or a range like Mon-Fri"],
    ["Mon-Fri-Sat 02:00-04:00 UTC", "the window: the day must be one of Mon…Sun"],
    ["Mon 2:00-04:00 UTC", "the window: the times must be 24-hour HH:MM-HH:MM"],
    ["Mon 24:00-04:00 UTC", "the window: the times must be 24-hour HH:MM-HH:MM"],
    ["Mon 02:00-02:00 UTC", "the window: start and end are the same time"],
    ["Mon 02:00-04:00 Mars/Olympus", "the window: unknown time zone"],
    ["Mon 02:00-04:00", "the window: expected <day>[-<day>] <HH:MM>-<HH:MM> <time zone>"],
    ["Mon 02:00-04:00 UTC,", "window 2: expected"],
  ])("%s is an error", (text, message) => {
    expect(() => parseMaintenanceWindows(text)).toThrow(WindowSyntaxError);
    expect(() => parseMaintenanceWindows(text)).toThrow(message);
  });
});

describe("insideWindow", () => {
  test("a window in a zone: its local weekday and time (Monday 30 November 2026, CET = UTC+1)", () => {
    const w = one("Mon-Fri 02:00-04:00 Europe/Berlin");
    expect(insideWindow(w, at("2026-11-30T00:59:59Z"))).toBe(false);
    expect(insideWindow(w, at("2026-11-30T01:00:00Z"))).toBe(true);
    expect(insideWindow(w, at("2026-11-30T02:59:59Z"))).toBe(true);
    expect(insideWindow(w, at("2026-11-30T03:00:00Z"))).toBe(false);
    expect(insideWindow(w, at("2026-11-29T01:30:00Z"))).toBe(false); // Sunday
  });

  test("a window past midnight belongs to its start day; 24:00 ends at midnight", () => {
    const w = one("Fri 22:00-02:00 UTC");
    expect(insideWindow(w, at("2026-11-27T21:59:00Z"))).toBe(false);
    expect(insideWindow(w, at("2026-11-27T22:00:00Z"))).toBe(true);
    expect(insideWindow(w, at("2026-11-28T01:59:00Z"))).toBe(true); // Saturday morning
    expect(insideWindow(w, at("2026-11-28T02:00:00Z"))).toBe(false);
    expect(insideWindow(w, at("2026-11-29T01:00:00Z"))).toBe(false); // Sunday morning: Saturday is no start day
    const late = one("Mon 22:00-24:00 UTC");
    expect(insideWindow(late, at("2026-11-30T23:59:00Z"))).toBe(true);
    expect(insideWindow(late, at("2026-12-01T00:00:00Z"))).toBe(false);
  });
});

describe("nextOpening", () => {
  test("now, when inside; else the next start", () => {
    expect(opening("Mon-Fri 02:00-04:00 Europe/Berlin", "2026-11-30T01:30:00Z")).toBe("2026-11-30T01:30:00.000Z");
    expect(opening("Mon-Fri 02:00-04:00 Europe/Berlin", "2026-11-28T15:00:00Z")).toBe("2026-11-30T01:00:00.000Z");
    expect(opening("Mon-Fri 02:00-04:00 Europe/Berlin", "2026-11-30T03:00:00Z")).toBe("2026-12-01T01:00:00.000Z");
    expect(opening("Sat 10:00-11:00 UTC, Sat 16:00-17:00 UTC", "2026-11-28T15:00:00Z")).toBe("2026-11-28T16:00:00.000Z");
    expect(opening("Sat 14:00-15:00 UTC", "2026-11-28T15:00:00Z")).toBe("2026-12-05T14:00:00.000Z");
  });

  test("spring forward (Berlin, 29 March 2026, 02:00 → 03:00): the window opens when the skipped hour ends", () => {
    expect(opening("Sun 02:00-04:00 Europe/Berlin", "2026-03-28T12:00:00Z")).toBe("2026-03-29T01:00:00.000Z");
    // Wholly inside the skipped hour: not that day, the Sunday after.
    expect(opening("Sun 02:15-02:45 Europe/Berlin", "2026-03-28T12:00:00Z")).toBe("2026-04-05T00:15:00.000Z");
  });

  test("fall back (Berlin, 25 October 2026, 03:00 → 02:00): the first pass of the repeated hour", () => {
    expect(opening("Sun 02:30-02:45 Europe/Berlin", "2026-10-24T12:00:00Z")).toBe("2026-10-25T00:30:00.000Z");
    const w = one("Sun 02:30-02:45 Europe/Berlin");
    expect(insideWindow(w, at("2026-10-25T01:35:00Z"))).toBe(true); // the second pass is inside too
  });

  test("the message names the local time, the zone and UTC", () => {
    const w = one("Mon-Fri 02:00-04:00 Europe/Berlin");
    expect(openingText(w, at("2026-11-30T01:00:00Z"))).toBe("Mon 2026-11-30 02:00 Europe/Berlin (2026-11-30T01:00:00Z)");
  });
});
