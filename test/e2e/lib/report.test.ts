import { describe, expect, test } from "bun:test";
import { runSteps, type Step } from "./report.ts";

const step = (n: number, needs: number[], run: () => Promise<string | void>): Step => ({
  n,
  title: `step ${n}`,
  needs,
  timeoutMs: 1000,
  run,
});

describe("runSteps", () => {
  test("reports a step whose prerequisite failed as failed without running it", async () => {
    const ran: number[] = [];
    const lines: string[] = [];
    const outcomes = await runSteps(
      [
        step(1, [], async () => {
          ran.push(1);
          throw new Error("boom");
        }),
        step(2, [1], async () => {
          ran.push(2);
        }),
        step(3, [], async () => {
          ran.push(3);
          return "fine";
        }),
      ],
      new AbortController().signal,
      (l) => lines.push(l),
    );
    expect(ran).toEqual([1, 3]);
    expect(outcomes.map((o) => o.passed)).toEqual([false, false, true]);
    expect(lines[0]).toStartWith("FAIL step 1: step 1 (boom)");
    expect(lines[1]).toStartWith("FAIL step 2: step 2 (not run: step 1 failed)");
    expect(lines[2]).toStartWith("PASS step 3: step 3 — fine");
  });
});
