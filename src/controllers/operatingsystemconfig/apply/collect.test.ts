import { describe, expect, test } from "bun:test";
import { emptyChanges } from "../../../osc/index.ts";
import { inlineContentChars } from "./collect.ts";

describe("inlineContentChars", () => {
  test("should count the inline content of the files to write, not other sources", () => {
    const c = emptyChanges("x");
    c.files.changed.push(
      { path: "/a", content: { inline: { encoding: "b64", data: "QUJD" } } },
      { path: "/b", content: { inline: { encoding: "", data: "hello" } } },
      { path: "/c", content: { secretRef: { name: "s", dataKey: "k" } } },
    );
    c.files.deleted.push({ path: "/d", content: { inline: { encoding: "", data: "not written" } } });
    expect(inlineContentChars(c)).toBe(9);
  });
});
