import { describe, expect, test } from "bun:test";
import type { Osc, Unit } from "../../osc/index.ts";
import { managedUnits } from "./managed-units.ts";

const osc = (units: Unit[], extensionUnits: Unit[] = []): Osc => ({
  apiVersion: "extensions.gardener.cloud/v1alpha1",
  kind: "OperatingSystemConfig",
  spec: { type: "", purpose: "", units, files: undefined, criConfig: undefined, inPlaceUpdates: undefined },
  status: { extensionUnits, extensionFiles: undefined, inPlaceUpdates: undefined },
});
const unit = (name: string, extra: Partial<Unit> = {}): Unit => ({
  name,
  command: undefined,
  enable: undefined,
  content: undefined,
  dropIns: undefined,
  filePaths: undefined,
  ...extra,
});

describe("managedUnits", () => {
  describe("enabled defaulting", () => {
    test.each<[string, Partial<Unit>, boolean]>([
      ["explicit true", { enable: true }, true],
      ["explicit false with content", { enable: false, content: "[Unit]" }, false],
      ["no enable, content", { content: "[Unit]" }, true],
      ["no enable, empty content", { content: "" }, true],
      ["no enable, a drop-in", { dropIns: [{ name: "a.conf", content: "" }] }, true],
      ["no enable, nothing", {}, false],
    ])("should decide enabled for a unit with %s", (_what, extra, want) => {
      expect(managedUnits(osc([unit("a.service", extra)]))).toEqual([{ name: "a.service", enabled: want }]);
    });
  });

  describe("extension units", () => {
    test("should override a spec unit only when the extension sets enable", () => {
      const got = managedUnits(
        osc(
          [unit("a.service", { enable: true }), unit("b.service", { content: "x" })],
          [unit("a.service", { enable: false }), unit("b.service", { dropIns: [{ name: "d.conf", content: "" }] })],
        ),
      );
      expect(got).toEqual([
        { name: "a.service", enabled: false },
        { name: "b.service", enabled: true },
      ]);
    });
    test("should append a new extension unit with the same defaulting rule", () => {
      expect(managedUnits(osc([], [unit("ext.service"), unit("ext2.service", { content: "x" })]))).toEqual([
        { name: "ext.service", enabled: false },
        { name: "ext2.service", enabled: true },
      ]);
    });
  });

  test("should sort by plain code-unit order, upper case before lower case", () => {
    const names = managedUnits(
      osc([unit("b.service"), unit("a.service"), unit("Z.service"), unit("a-b.service"), unit("a.b.service")]),
    ).map((u) => u.name);
    expect(names).toEqual(["Z.service", "a-b.service", "a.b.service", "a.service", "b.service"]);
  });

  test("should return nothing for an OSC without units", () => {
    expect(managedUnits(osc([]))).toEqual([]);
  });
});
