import { describe, expect, test } from "bun:test";
import { StepError, step } from "./step-error.ts";

describe("step", () => {
  test("should return the step's value when it succeeds", async () => {
    expect(await step("failed reading", async () => 42)).toBe(42);
  });

  test("should name the step and keep the original as cause when it fails", async () => {
    const original = new Error("permission denied");
    const err = await step("failed reading /etc/x", async () => {
      throw original;
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepError);
    expect((err as StepError).message).toBe("failed reading /etc/x: permission denied");
    expect((err as StepError).step).toBe("failed reading /etc/x");
    expect((err as StepError).cause).toBe(original);
  });

  test("should add a cause's message the wrapped error does not already say", async () => {
    const err = new StepError("failed getting node", new Error("GET /api/v1/nodes/a", { cause: new Error("connection refused") }));
    expect(err.message).toBe("failed getting node: GET /api/v1/nodes/a: connection refused");
  });

  test("should not repeat a nested step's text", () => {
    const inner = new StepError("failed writing /etc/a", new Error("disk full"));
    expect(new StepError("failed applying changed files", inner).message).toBe(
      "failed applying changed files: failed writing /etc/a: disk full",
    );
  });

  test("should turn a thrown non-error into text", () => {
    expect(new StepError("failed x", "plain string").message).toBe("failed x: plain string");
  });
});
