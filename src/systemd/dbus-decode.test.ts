import { describe, expect, test } from "bun:test";
import { Variant } from "dbus-next";
import { decodeJobRemoved, decodeUnitList, decodeUnitProperties } from "./dbus-decode.ts";
import { SystemdCallError } from "./types.ts";

const unitProps = (overrides: Record<string, Variant> = {}) => [
  {
    ActiveState: new Variant("s", "active"),
    SubState: new Variant("s", "running"),
    LoadState: new Variant("s", "loaded"),
    UnitFileState: new Variant("s", "enabled"),
    StateChangeTimestamp: new Variant("t", 1_700_000_000_123_456n),
    InvocationID: new Variant("ay", Buffer.from([0xde, 0xad, 0xbe, 0xef])),
    Description: new Variant("s", "ignored"),
    ...overrides,
  },
];

describe("decodeUnitProperties", () => {
  test("should turn µs timestamps into ms and InvocationID bytes into hex", () => {
    expect(decodeUnitProperties(unitProps())).toEqual({
      activeState: "active",
      subState: "running",
      loadState: "loaded",
      unitFileState: "enabled",
      stateChangeTimestampMs: 1_700_000_000_123,
      invocationId: "deadbeef",
    });
  });

  test("should give an empty UnitFileState and InvocationID when systemd leaves them out", () => {
    const [props] = unitProps();
    const { UnitFileState: _f, InvocationID: _i, ...rest } = props!;
    expect(decodeUnitProperties([rest])).toMatchObject({ unitFileState: "", invocationId: "" });
  });

  test.each([
    ["a timestamp of the wrong type", { StateChangeTimestamp: new Variant("s", "yesterday") }],
    ["an ActiveState that is not a string", { ActiveState: new Variant("u", 3) }],
  ])("should reject %s with SystemdCallError", (_, overrides) => {
    expect(() => decodeUnitProperties(unitProps(overrides))).toThrow(SystemdCallError);
  });
});

describe("decodeUnitList", () => {
  test("should keep name, description and the three states of each row", () => {
    const row = ["a.service", "A", "loaded", "active", "running", "", "/org/freedesktop/systemd1/unit/a_2eservice", 0, "", "/"];
    expect(decodeUnitList([[row]])).toEqual([
      { name: "a.service", description: "A", loadState: "loaded", activeState: "active", subState: "running" },
    ]);
  });

  test("should reject a row that is too short", () => {
    expect(() => decodeUnitList([[["a.service", "A", "loaded"]]])).toThrow("unexpected unit list from systemd");
  });
});

describe("decodeJobRemoved", () => {
  test("should pick job path and result", () => {
    expect(decodeJobRemoved([7, "/org/freedesktop/systemd1/job/7", "a.service", "done"])).toEqual({
      jobPath: "/org/freedesktop/systemd1/job/7",
      unit: "a.service",
      result: "done",
    });
  });

  test("should ignore a malformed signal", () => {
    expect(decodeJobRemoved(["7"])).toBeUndefined();
  });
});
