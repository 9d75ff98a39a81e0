import { describe, expect, test } from "bun:test";
import type { Logger } from "../../../log/index.ts";
import { emptyChanges, type Osc } from "../../../osc/index.ts";
import { collectAfterLargeApply, inlineContentChars } from "./collect.ts";

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

describe("collectAfterLargeApply", () => {
  const collections = (summaryFiles: number, planned?: Osc): unknown[] => {
    const seen: unknown[] = [];
    const log: Logger = { debug: (_msg, f) => void seen.push(f?.["collection"]), info() {}, warn() {}, error() {}, child: () => log };
    collectAfterLargeApply({ filesChanged: summaryFiles, filesDeleted: 0, unitsRestarted: [] }, log, planned);
    return seen;
  };
  const oscWith = (chars: number): Osc =>
    ({ spec: { files: [{ path: "/a", content: { inline: { encoding: "", data: "x".repeat(chars) } } }] } }) as unknown as Osc;

  test("should take a large plan's garbage by an eden collection, a big OSC's plan and an apply's end by a full one", () => {
    expect(collections(1000, oscWith(25_000))).toEqual(["eden"]);
    expect(collections(1000, oscWith(4 * 1024 * 1024))).toEqual(["full"]);
    expect(collections(1000)).toEqual(["full"]);
  });

  test("should leave an apply of fewer than 250 files alone", () => {
    expect(collections(249, oscWith(25_000))).toEqual([]);
    expect(collections(249)).toEqual([]);
  });
});
