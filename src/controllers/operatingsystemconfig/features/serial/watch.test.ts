import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../../../kube/index.ts";
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
  test.each([
    [true, ["pool"]],
    [false, []],
  ])("should enqueue the Secret on update only when outdated=%p, once the check answered", async (outdated, want) => {
    const added: string[] = [];
    const answer = Promise.withResolvers<boolean>();
    const h = enqueueSecretWhenOutdated({
      secret: { namespace: "kube-system", name: "pool" },
      outdated: () => answer.promise,
      log: silent,
      signal: new AbortController().signal,
    });
    const q = { add: (k: { name: string }) => added.push(k.name) };
    h.create(lease(), q);
    h.update(lease("host-b"), lease(), q);
    expect(added).toEqual([]); // nothing before the check answered
    answer.resolve(outdated);
    await answer.promise; // the handler's callback was registered first, so it has run now
    expect(added).toEqual(want);
  });

  test("should enqueue the Secret when the check itself fails", async () => {
    const added: string[] = [];
    const answer = Promise.withResolvers<boolean>();
    const h = enqueueSecretWhenOutdated({
      secret: { namespace: "kube-system", name: "pool" },
      outdated: () => answer.promise,
      log: silent,
      signal: new AbortController().signal,
    });
    h.update(lease("host-b"), lease(), { add: (k: { name: string }) => added.push(k.name) });
    answer.reject(new Error("node unreadable"));
    await answer.promise.catch(() => undefined);
    expect(added).toEqual(["pool"]);
  });
});
