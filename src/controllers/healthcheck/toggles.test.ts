import { describe, expect, test } from "bun:test";
import { recordReadyToggle } from "./toggles.ts";

const min = 60_000;

describe("recordReadyToggle", () => {
  test.each([
    ["the first transition", [], 0, [0], false],
    ["four in the window", [1, 2, 3].map((m) => m * min), 4 * min, [1, 2, 3, 4].map((m) => m * min), false],
    ["the fifth in the window", [1, 2, 3, 4].map((m) => m * min), 5 * min, [1, 2, 3, 4, 5].map((m) => m * min), true],
    ["a sixth in the window", [1, 2, 3, 4, 5].map((m) => m * min), 6 * min, [1, 2, 3, 4, 5, 6].map((m) => m * min), true],
    [
      "the fifth after the oldest left the window",
      [0, 2, 3, 4].map((m) => m * min),
      10 * min + 1,
      [2, 3, 4].map((m) => m * min).concat(10 * min + 1),
      false,
    ],
    [
      "the fifth exactly ten minutes after the first",
      [0, 2, 3, 4].map((m) => m * min),
      10 * min,
      [0, 2, 3, 4, 10].map((m) => m * min),
      true,
    ],
  ] as const)("should handle %s", (_what, before, now, after, tooMany) => {
    expect(recordReadyToggle(before, now)).toEqual({ toggles: [...after], tooMany });
  });
});
