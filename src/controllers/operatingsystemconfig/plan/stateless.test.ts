import { describe, expect, test } from "bun:test";
import { decodeOsc } from "../../../osc/index.ts";
import { skipsStateFiles } from "./stateless.ts";

describe("skipsStateFiles", () => {
  const osc = (purpose: string) => decodeOsc(`spec:\n  purpose: ${purpose}\n`);
  test("should skip only a provision OSC on a self-hosted machine (9.4)", () => {
    expect(skipsStateFiles(true, osc("provision"))).toBe(true);
    expect(skipsStateFiles(true, osc("reconcile"))).toBe(false);
    expect(skipsStateFiles(false, osc("provision"))).toBe(false);
    expect(skipsStateFiles(undefined, osc("provision"))).toBe(false);
  });
});
