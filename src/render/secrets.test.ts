import { describe, expect, test } from "bun:test";
import { RenderError } from "./errors.ts";
import { parseRenderSecrets } from "./secrets.ts";

const secret = "c2VjcmV0LXRva2VuLTk4NzY1NDMyMTA";
const errorOf = (text: string): RenderError => {
  try {
    parseRenderSecrets(text);
  } catch (err) {
    if (err instanceof RenderError) return err;
    throw err;
  }
  throw new Error("expected a RenderError");
};

describe("parseRenderSecrets", () => {
  test("should read data and stringData", () => {
    const s = parseRenderSecrets("kind: Secret\nmetadata: {name: s}\ndata: {a: eA==}\nstringData: {b: y}\n");
    expect(s["s"]?.["b"]).toBe("y");
    expect(new TextDecoder().decode(s["s"]?.["a"] as Uint8Array)).toBe("x");
  });

  test.each([
    [
      "a value of the wrong type",
      `kind: Secret\nmetadata: {name: s}\ndata: ${secret}\n`,
      "secrets[0].data: invalid type: expected object, got string",
    ],
    [
      "a YAML syntax error",
      `kind: Secret\nmetadata: {name: s}\ndata: {a: "${secret}}\n`,
      "secrets[0]: invalid YAML: a closing quote or bracket is missing at line 4, column 1",
    ],
    [
      "a recursive alias",
      "kind: Secret\nmetadata: &m {name: s, self: *m}\n",
      "secrets[0]: invalid YAML: a recursive alias (a node that contains itself)",
    ],
  ])("should refuse %s naming the place, never the content", (_what, text, message) => {
    const err = errorOf(text);
    expect(err.message).toBe(message);
    expect(err.message).not.toContain(secret);
  });
});
