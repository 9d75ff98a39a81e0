import { describe, expect, test } from "bun:test";
import { decide, formatSlot, mayBeGone, parseSlot, rolloutParallelism, type Slot, slotKey, slotsOf } from "./slots.ts";
import { defaultRolloutTimings as t } from "./timings.ts";

const now = Date.parse("2026-01-01T12:00:00Z");
const ago = (s: number) => new Date(now - s * 1000).toISOString();
const slot = (state: Slot["state"], renewedAgoS = 0, checksum = "c2"): Slot => ({
  checksum,
  since: ago(renewedAgoS + 5),
  renewed: ago(renewedAgoS),
  state,
});
const slots = (entries: Record<string, Slot>) => new Map(Object.entries(entries));

describe("slot annotations", () => {
  test("should round-trip as compact JSON with a fixed key order", () => {
    const s: Slot = { checksum: "abc", since: "2026-01-01T12:00:00.000Z", renewed: "2026-01-01T12:00:30.000Z", state: "verifying" };
    expect(formatSlot(s)).toBe(
      '{"checksum":"abc","since":"2026-01-01T12:00:00.000Z","renewed":"2026-01-01T12:00:30.000Z","state":"verifying"}',
    );
    expect(parseSlot(formatSlot(s))).toEqual(s);
  });
  test.each([
    "",
    "{",
    "[]",
    '{"checksum":"a","since":"x","renewed":"y","state":"waiting"}',
    '{"checksum":"a","since":"x","renewed":"y","state":"done"}',
    '{"checksum":1}',
  ])("should ignore the foreign (or pre-issue-25 waiting) value %p", (v) => {
    expect(parseSlot(v)).toBeUndefined();
  });
  test("should read only slot annotations, keyed by node", () => {
    const got = slotsOf({
      "slot.node-agent.gardener.cloud/n1": formatSlot(slot("applying")),
      other: "x",
      "slot.node-agent.gardener.cloud/n2": "junk",
    });
    expect([...got.keys()]).toEqual(["n1"]);
  });
});

describe("slotKey", () => {
  test("should use the node name as it is up to 63 characters", () => {
    const n = "n".repeat(63);
    expect(slotKey(n)).toEqual({ key: `slot.node-agent.gardener.cloud/${n}`, hashed: false });
  });
  test("should shorten a longer node name to 63 characters, keep the full name in the slot, and read it back", () => {
    const long = "shoot--garden--a-long-project-name--worker-pool-z1-66b8f-abcde.example.internal";
    const { key, hashed } = slotKey(long);
    expect(hashed).toBe(true);
    expect(key.length - "slot.node-agent.gardener.cloud/".length).toBe(63);
    expect(key.startsWith(`slot.node-agent.gardener.cloud/${long.slice(0, 46)}-`)).toBe(true);
    expect(slotKey(long).key).toBe(key);
    const value = formatSlot({ ...slot("applying"), node: long });
    expect([...slotsOf({ [key]: value }).keys()]).toEqual([long]);
  });
});

describe("rolloutParallelism", () => {
  test.each([
    [undefined, undefined],
    [{}, undefined],
    [{ "node-agent.gardener.cloud/rollout-parallelism": "2" }, 2],
    [{ "node-agent.gardener.cloud/rollout-parallelism": " 1 " }, 1],
    [{ "node-agent.gardener.cloud/rollout-parallelism": "0" }, undefined],
    [{ "node-agent.gardener.cloud/rollout-parallelism": "-1" }, undefined],
    [{ "node-agent.gardener.cloud/rollout-parallelism": "two" }, undefined],
    [{ "node-agent.gardener.cloud/rollout-parallelism": "1.5" }, undefined],
  ])("should read %p as %p", (annotations, want) => {
    expect(rolloutParallelism(annotations)).toBe(want);
  });
});

describe("decide (issue 16 decision table; a waiting node has no entry, issue 25)", () => {
  test.each<[string, Record<string, Slot>, number, ReturnType<typeof decide>]>([
    ["no entry of mine, a slot free: take", { a: slot("applying") }, 2, { kind: "take" }],
    ["my entry is for an older checksum: take", { me: slot("failed", 0, "c1") }, 2, { kind: "take" }],
    ["all N slots active: wait", { a: slot("applying"), b: slot("verifying") }, 2, { kind: "wait", behind: ["a", "b"] }],
    ["active + failed fill N: wait", { a: slot("applying"), b: slot("failed") }, 2, { kind: "wait", behind: ["a", "b"] }],
    ["failed alone fill N: halted", { a: slot("failed"), b: slot("failed") }, 2, { kind: "halted", failed: ["a", "b"] }],
    ["a stale active slot counts as failed", { a: slot("applying", 300) }, 1, { kind: "halted", failed: ["a"] }],
    ["failed slots of an older checksum do not count", { a: slot("failed", 0, "c1"), b: slot("failed", 0, "c1") }, 2, { kind: "take" }],
    // An agent that has not seen the new Secret yet still changes its node: it counts against N.
    [
      "a live active slot of an older checksum: wait",
      { a: slot("applying", 0, "c1"), b: slot("applying") },
      2,
      { kind: "wait", behind: ["a", "b"] },
    ],
    [
      "a stale active slot of an older checksum does not count",
      { a: slot("verifying", 301, "c1"), b: slot("applying") },
      2,
      { kind: "take" },
    ],
    [
      "my own applying slot: resume the apply",
      { me: slot("applying"), a: slot("failed"), b: slot("failed") },
      2,
      { kind: "resume", state: "applying" },
    ],
    ["my own stale verifying slot: resume (I am alive)", { me: slot("verifying", 400) }, 1, { kind: "resume", state: "verifying" }],
    ["my own slot failed: stay off", { me: slot("failed") }, 2, { kind: "own-failed" }],
  ])("%s", (_name, entries, n, want) => {
    expect(decide(slots(entries), "me", "c2", n, now, t)).toEqual(want);
  });
});

describe("mayBeGone (issue 25)", () => {
  test.each([
    ["applying", 299, false],
    ["verifying", 0, false],
    ["failed", 0, true],
    ["applying", 300, true],
  ] as const)("a %s slot renewed %p s ago: %p", (state, agoS, asked) => {
    expect(mayBeGone(slot(state, agoS), now, t)).toBe(asked);
  });
});
