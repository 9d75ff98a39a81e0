import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../../kube/index.ts";
import { enqueueSecretWhenOutdated, isOutdated, serialLeasePredicate } from "./watch.ts";

const lease = (holder?: string): KubeObject => ({
  metadata: { name: "pool", namespace: "kube-system" },
  spec: holder === undefined ? {} : { holderIdentity: holder },
});
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

describe("serial lease predicate (scenario 17)", () => {
  const p = serialLeasePredicate("host-a");
  test.each([
    ["another holder released", lease("host-b"), lease(), true],
    ["an old lease without holder stays free", lease(), lease(), true],
    ["an old lease with an empty holder stays free", lease(""), lease(""), true],
    ["we released it ourselves", lease("host-a"), lease(), false],
    ["another node took it", lease(), lease("host-b"), false],
    ["the holder changed hands", lease("host-b"), lease("host-c"), false],
  ])("update should pass when %s: %p", (_name, oldLease, newLease, want) => {
    expect(p.update(oldLease, newLease)).toBe(want);
  });
  test("should drop create, delete and generic events", () => {
    expect(p.create(lease())).toBe(false);
    expect(p.delete(lease())).toBe(false);
    expect(p.generic(lease())).toBe(false);
  });
});

describe("isOutdated", () => {
  test.each([
    ["the checksums differ", "a", "b", true],
    ["the checksums match", "a", "a", false],
    ["the Secret is unreadable", undefined, "a", true],
    ["the Node has no checksum or is unreadable", "a", undefined, true],
  ])("should be as expected when %s", (_name, secret, node, want) => {
    expect(isOutdated(secret, node)).toBe(want);
  });
});

describe("enqueueSecretWhenOutdated", () => {
  const poll = async (cond: () => boolean) => {
    const deadline = Date.now() + 2_000;
    while (!cond() && Date.now() < deadline) await new Promise((r) => setImmediate(r));
  };
  test.each([
    [true, 1],
    [false, 0],
  ])("should enqueue the Secret on update only when outdated=%p", async (outdated, want) => {
    const added: string[] = [];
    let checked = false;
    const h = enqueueSecretWhenOutdated({
      secret: { namespace: "kube-system", name: "pool" },
      outdated: async () => {
        checked = true;
        return outdated;
      },
      log: silent,
      signal: new AbortController().signal,
    });
    const q = { add: (k: { name: string }) => added.push(k.name) };
    h.create(lease(), q);
    h.update(lease("host-b"), lease(), q);
    await poll(() => checked);
    await new Promise((r) => setImmediate(r));
    expect(added).toHaveLength(want);
  });
});
