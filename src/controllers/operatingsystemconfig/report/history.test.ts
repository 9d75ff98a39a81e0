import { describe, expect, test } from "bun:test";
import { appendHistory, historyEntry, parseHistory } from "./history.ts";

const start = Date.parse("2026-11-24T10:00:00.400Z");

describe("historyEntry", () => {
  test("should keep the checksum prefix, whole-second start and counts", () => {
    expect(
      historyEntry("0123456789abcdef0123", start, 1234.4, { filesChanged: 2, filesDeleted: 1, unitsRestarted: ["a.service"] }, "Applied"),
    ).toEqual({
      checksum: "0123456789ab",
      start: "2026-11-24T10:00:00Z",
      durationMs: 1234,
      filesChanged: 2,
      filesDeleted: 1,
      unitsRestarted: ["a.service"],
      outcome: "Applied",
    });
  });

  test("should list three restarted units and count the rest", () => {
    const e = historyEntry("c", start, 1, { filesChanged: 0, filesDeleted: 0, unitsRestarted: ["a", "b", "c", "d", "e"] }, "Failed");
    expect(e.unitsRestarted).toEqual(["a", "b", "c"]);
    expect(e.moreUnits).toBe(2);
  });
});

describe("appendHistory", () => {
  const entry = (i: number, units: string[] = []) =>
    historyEntry(`${i}`.padStart(64, "0"), start + i * 1000, i, { filesChanged: i, filesDeleted: 0, unitsRestarted: units }, "Applied");

  test("should keep the last five applies, oldest first", () => {
    let text: string | undefined;
    for (let i = 1; i <= 7; i++) text = appendHistory(text, entry(i));
    expect(parseHistory(text).map((e) => e.filesChanged)).toEqual([3, 4, 5, 6, 7]);
  });

  test("should stay within 2 KB with long unit names, keeping the newest entry", () => {
    const long = (n: string) => `${n}-${"x".repeat(240)}.service`;
    let text: string | undefined;
    for (let i = 1; i <= 5; i++) text = appendHistory(text, entry(i, [long("a"), long("b"), long("c"), long("d")]));
    expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(2048);
    const entries = parseHistory(text);
    expect(entries).toHaveLength(5);
    expect(entries.at(-1)?.filesChanged).toBe(5);
    expect(entries.at(-1)?.moreUnits).toBe(4);
  });

  test("should replace an unreadable annotation", () => {
    expect(parseHistory(appendHistory("{not json", entry(1)))).toHaveLength(1);
    expect(parseHistory(appendHistory('[{"checksum":1}]', entry(1)))).toHaveLength(1);
  });
});
