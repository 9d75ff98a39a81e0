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

  test("should name where a reply is malformed and what was expected, never the value found", () => {
    const secret = "c2VjcmV0LXRva2VuLTk4NzY1NDMyMTA";
    expect(() => decodeUnitList([[["a.service", "A", "loaded", "active", 7]]])).toThrow(
      "unexpected unit list from systemd at 0.0.4: invalid type: expected string, got number",
    );
    expect(() => decodeUnitProperties(unitProps({ ActiveState: new Variant("u", 3), SubState: new Variant("s", secret) }))).toThrow(
      "unexpected unit properties from systemd at 0.ActiveState: invalid type: expected string, got number",
    );
    const numeric = 98_765_432_101_234; // valibot's own message would quote it
    try {
      decodeUnitList([[[secret, secret, secret, secret, numeric]]]);
      throw new Error("expected a throw");
    } catch (err) {
      expect(err).toBeInstanceOf(SystemdCallError);
      expect((err as Error).message).not.toContain(secret);
      expect((err as Error).message).not.toContain(String(numeric));
    }
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
