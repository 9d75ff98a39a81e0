import { describe, expect, test } from "bun:test";
import type { Logger } from "../../../log/index.ts";
import { emptyChanges, type Osc } from "../../../osc/index.ts";
import { bigTextChars } from "../../../text/index.ts";
import { summarizeChanges } from "../plan/summary.ts";
import { collectAfterBigPlan, inlineContentChars, oscInlineChars } from "./collect.ts";

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

const oscWith = (chars: number, extension = 0): Osc => ({
  spec: {
    type: "",
    purpose: "reconcile",
    files: [
      { path: "/a", content: { inline: { encoding: "", data: "x".repeat(chars) } } },
      { path: "/b", content: { imageRef: { image: "r/i:1", filePathInImage: "/b" } } },
    ],
  },
  status: { extensionFiles: [{ path: "/e", content: { inline: { encoding: "", data: "y".repeat(extension) } } }] },
});

describe("collectAfterBigPlan", () => {
  const collected = (osc: Osc) => {
    const records: string[] = [];
    const log: Logger = { debug: (msg) => void records.push(msg), info: () => {}, warn: () => {}, error: () => {}, child: () => log };
    collectAfterBigPlan(osc, { ...summarizeChanges(emptyChanges("x")), filesChanged: 1000 }, log);
    return records;
  };

  test("should count the inline content of the OSC's and the extensions' files", () => {
    expect(oscInlineChars(oscWith(5, 7))).toBe(12);
    expect(oscInlineChars({ spec: { type: "", purpose: "" }, status: {} })).toBe(0);
  });

  test("should not collect in full before the first write of a large apply of an OSC with little content", () => {
    expect(collected(oscWith(bigTextChars - 2, 1))).toEqual([]);
  });

  test("should collect once planned for a big OSC, extension files counted", () => {
    expect(collected(oscWith(bigTextChars - 2, 2))).toEqual(["Collected the garbage of a large apply"]);
  });
});
