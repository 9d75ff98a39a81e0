import { describe, expect, test } from "bun:test";
import { DurationError, formatDuration, formatDurationNs, parseDuration, parseDurationNs } from "./duration.ts";

describe("parseDuration", () => {
  test.each([
    ["0", 0],
    ["10m", 600_000],
    ["1h", 3_600_000],
    ["12h0m0s", 43_200_000],
    ["1m30s", 90_000],
    ["500ms", 500],
    ["1.5s", 1500],
    [".5s", 500],
    ["1.s", 1000],
    ["-1.5s", -1500],
    ["+15s", 15_000],
    ["1h2m3s4ms5us6ns", 3_723_004.005006],
    ["1\u00b5s", 0.001],
    ["1\u03bcs", 0.001],
  ])("should parse %p as %p ms", (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  test.each(["", "1", "s", ".s", "1x", "1h-2m", "-", "9223372036854775808ns", "3000000h"])(
    "should reject %p with a DurationError",
    (input) => {
      expect(() => parseDuration(input)).toThrow(DurationError);
    },
  );

  test("should name the input in the error like Go does", () => {
    expect(() => parseDuration("10")).toThrow('time: missing unit in duration "10"');
  });
});

describe("formatDuration", () => {
  test.each([
    [0, "0s"],
    [43_200_000, "12h0m0s"],
    [600_000, "10m0s"],
    [3_600_000, "1h0m0s"],
    [90_000, "1m30s"],
    [15_000, "15s"],
    [1500, "1.5s"],
    [500, "500ms"],
    [1.5, "1.5ms"],
    [0.001, "1\u00b5s"],
    [-90_000, "-1m30s"],
  ])("should format %p ms as %p", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  test("should format nanoseconds below a microsecond", () => {
    expect(formatDurationNs(999n)).toBe("999ns");
  });

  test.each(["1h2m3.5s", "1.000000001s", "2562047h47m16.854775807s"])("should round-trip %p", (text) => {
    expect(formatDurationNs(parseDurationNs(text))).toBe(text);
  });
});
