import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs } from "../../../host/index.ts";
import type { KubeObject } from "../../../kube/index.ts";
import { isSelfHostedMachine, namedSecretPredicate, oscSecretSelectors } from "./gardenadm.ts";

describe("oscSecretSelectors", () => {
  test.each([
    ["a normal machine", false, false, { fieldSelector: "metadata.name=osc-a" }],
    ["a normal machine with its Node", false, true, { fieldSelector: "metadata.name=osc-a" }],
    ["a self-hosted machine before its Node exists", true, false, { labelSelector: "worker.gardener.cloud/pool" }],
    ["a self-hosted machine once its Node exists", true, true, { fieldSelector: "metadata.name=osc-a" }],
  ] as const)("should select for %s", (_what, selfHosted, nodeKnown, want) => {
    expect(oscSecretSelectors({ secretName: "osc-a", selfHosted, nodeKnown })).toEqual(want);
  });
});

describe("namedSecretPredicate", () => {
  const p = namedSecretPredicate("osc-a");
  const secret = (name: string): KubeObject => ({ metadata: { name, namespace: "kube-system" } });
  test("should pass only the configured Secret, for every event kind", () => {
    expect([
      p.create(secret("osc-a")),
      p.update(secret("x"), secret("osc-a")),
      p.delete(secret("osc-a")),
      p.generic(secret("osc-a")),
    ]).toEqual([true, true, true, true]);
    expect([p.create(secret("osc-b")), p.update(secret("osc-a"), secret("osc-b"))]).toEqual([false, false]);
  });
});

describe("isSelfHostedMachine", () => {
  let root = "";
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "gna-gardenadm-"));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  test("should be true only when gardenadm's directory exists", async () => {
    const host = createHostFs(root);
    expect(await isSelfHostedMachine(host)).toBe(false);
    await mkdir(join(root, "var/lib"), { recursive: true });
    await writeFile(join(root, "var/lib/gardenadm"), "not a directory");
    expect(await isSelfHostedMachine(host)).toBe(false);
    await rm(join(root, "var/lib/gardenadm"));
    await mkdir(join(root, "var/lib/gardenadm"));
    expect(await isSelfHostedMachine(host)).toBe(true);
  });
});
