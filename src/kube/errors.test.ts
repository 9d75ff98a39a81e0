import { describe, expect, test } from "bun:test";
import { ApiError, ifFound } from "./errors.ts";

describe("ifFound", () => {
  test("should pass the object through", async () => expect(await ifFound(Promise.resolve({ a: 1 }))).toEqual({ a: 1 }));
  test("should read NotFound as undefined", async () =>
    expect(await ifFound(Promise.reject(new ApiError(404, "NotFound", "gone")))).toBeUndefined());
  test("should throw every other failure", async () =>
    expect(ifFound(Promise.reject(new ApiError(403, "Forbidden", "no")))).rejects.toThrow("no"));
});
