import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../../../kube/index.ts";
import { formatSlot, type Slot } from "./slots.ts";
import { slotsOnlyChanged } from "./watch.ts";

const lease = (slots: Record<string, Slot["state"]>, holder?: string, renewed = "2026-01-01T12:00:00.000Z"): KubeObject => ({
  metadata: {
    name: "pool",
    namespace: "kube-system",
    annotations: Object.fromEntries(
      Object.entries(slots).map(([n, state]) => [
        `slot.node-agent.gardener.cloud/${n}`,
        formatSlot({ checksum: "c", since: "2026-01-01T12:00:00.000Z", renewed, state }),
      ]),
    ),
  },
  spec: holder === undefined ? {} : { holderIdentity: holder },
});

const prefix = "slot.node-agent.gardener.cloud/";
const withAnnotation = (o: KubeObject, key: string, value: string): KubeObject => ({
  ...o,
  metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, [key]: value } },
});
/** The same slot of `node` written with its keys in another order and spaces: another text, the same slot. */
const reformatted = (o: KubeObject, node: string): KubeObject => {
  const slot = JSON.parse(o.metadata.annotations?.[`${prefix}${node}`] ?? "{}") as Record<string, string>;
  const text = JSON.stringify(Object.fromEntries(Object.entries(slot).reverse()), null, 1);
  return withAnnotation(o, `${prefix}${node}`, text);
};

describe("slotsOnlyChanged", () => {
  test.each([
    ["a slot was added", lease({}), lease({ a: "applying" }), true],
    ["a slot was renewed", lease({ a: "applying" }), lease({ a: "applying" }, undefined, "2026-01-01T12:00:30.000Z"), true],
    ["nothing of the slots changed", lease({ a: "applying" }), lease({ a: "applying" }), false],
    ["the serial lock was released", lease({}, "host-a"), lease({}), false],
    ["a slot changed while the serial lock is held", lease({}, "host-a"), lease({ a: "applying" }, "host-a"), false],
    ["an annotation outside the slots changed", lease({ a: "applying" }), withAnnotation(lease({ a: "applying" }), "other", "x"), false],
    ["a slot's text changed but not the slot", lease({ a: "applying" }), reformatted(lease({ a: "applying" }), "a"), false],
    [
      "an entry that is no slot changed",
      withAnnotation(lease({}), `${prefix}x`, "{"),
      withAnnotation(lease({}), `${prefix}x`, "[]"),
      false,
    ],
    ["an entry that is no slot became one", withAnnotation(lease({}), `${prefix}a`, "{"), lease({ a: "applying" }), true],
    ["a slot was removed", lease({ a: "applying", b: "verifying" }), lease({ b: "verifying" }), true],
  ])("%s: %p", (_name, before, after, want) => {
    expect(slotsOnlyChanged(before, after)).toBe(want);
  });
});
