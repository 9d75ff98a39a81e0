import { afterEach, describe, expect, test } from "bun:test";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeClock } from "../../../../test/doubles/fake-clock.ts";
import { createHostFs, type HostFs } from "../../../host/index.ts";
import type { Kube } from "../../../kube/index.ts";
import { nopLogger } from "../../../log/index.ts";
import type { Osc } from "../../../osc/index.ts";
import type { EventRecorder } from "../../events.ts";
import { Stager, type StagerDeps } from "./stager.ts";
import { readStageRecord } from "./store.ts";

const roots: string[] = [];
afterEach(async () => {
  for (const r of roots.splice(0)) await rm(r, { recursive: true, force: true });
});

/** An image "registry" of byte arrays by reference; every pull is counted. */
function images(content: Record<string, Uint8Array>) {
  const pulls: string[] = [];
  const extract: StagerDeps["extractImageFile"] = async (image, path) => {
    pulls.push(`${image} ${path}`);
    const bytes = content[image];
    if (bytes === undefined) throw new Error(`manifest unknown: ${image}`);
    return bytes;
  };
  return { pulls, extract };
}

const osc = (...refs: string[]): Osc =>
  ({
    spec: {
      files: [
        { path: "/etc/inline", content: { inline: { data: "x" } } },
        ...refs.map((image, i) => ({
          path: `/opt/bin/f${i}`,
          permissions: 0o755,
          content: { imageRef: { image, filePathInImage: "/f" } },
        })),
      ],
    },
  }) as unknown as Osc;

async function setup(o: { content: Record<string, Uint8Array>; maxBytes?: number; freeBytes?: number }) {
  const root = await mkdtemp(join(tmpdir(), "gna-stager-"));
  roots.push(root);
  const real = createHostFs(root);
  const host: HostFs = o.freeBytes === undefined ? real : { ...real, freeBytes: async () => o.freeBytes };
  const reg = images(o.content);
  const gauge: number[] = [];
  const events: EventRecorder = { event: async () => {} };
  const stager = new Stager({
    host,
    kube: {} as Kube, // no secretRef file in these OSCs: never called
    clock: new FakeClock(Date.UTC(2026, 10, 28, 12)),
    log: nopLogger,
    events,
    extractImageFile: reg.extract,
    arch: "amd64",
    maxBytes: o.maxBytes ?? 1_000_000,
    stagedBytes: (n) => gauge.push(n),
  });
  return { root, host, stager, pulls: reg.pulls, gauge };
}

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);
const signal = new AbortController().signal;
const c1 = "a".repeat(64);
const c2 = "b".repeat(64);
const c3 = "c".repeat(64);

describe("Stager", () => {
  test("stages once, serves the bytes from the stage, and keeps only the current and the pending version", async () => {
    const s = await setup({ content: { "r/one:v1": bytes(100, 1), "r/two:v1": bytes(200, 2) } });
    const first = await s.stager.stage(c1, osc("r/one:v1"), undefined, undefined, signal);
    expect(first.kind).toBe("staged");
    const again = await s.stager.stage(c1, osc("r/one:v1"), undefined, undefined, signal);
    expect(s.pulls).toEqual(["r/one:v1 /f"]);
    if (again.kind !== "staged") throw new Error("not staged");
    expect((await again.content.imageFile("r/one:v1", "/f"))?.bytes).toEqual(bytes(100, 1));
    expect(await again.content.imageFile("r/other:v1", "/f")).toBeUndefined();
    expect((await stat(join(s.root, "var/lib/gardener-node-agent/staged"))).mode & 0o777).toBe(0o700);

    await s.stager.stage(c2, osc("r/two:v1"), c1, undefined, signal);
    // c3 pending while c1 is current: c2 goes, with its blob.
    await s.stager.stage(c3, osc("r/one:v1", "r/one:v1"), c1, undefined, signal);
    expect((await readdir(join(s.root, "var/lib/gardener-node-agent/staged/versions"))).sort()).toEqual([`${c1}.json`, `${c3}.json`]);
    expect(await readdir(join(s.root, "var/lib/gardener-node-agent/staged/blobs"))).toHaveLength(1);
    await s.stager.applied(c3);
    expect(await readdir(join(s.root, "var/lib/gardener-node-agent/staged/versions"))).toEqual([`${c3}.json`]);
    expect(s.gauge.at(-1)).toBe(100);
  });

  test("fails with the image named and a growing retry, and a version with inline files only stages nothing", async () => {
    const s = await setup({ content: {} });
    const failed = await s.stager.stage(c1, osc("r/gone:v1"), undefined, undefined, signal);
    expect(failed).toMatchObject({ kind: "failed", requeueAfterMs: 5_000 });
    if (failed.kind !== "failed") throw new Error("not failed");
    expect(failed.message).toContain("image r/gone:v1 (file /opt/bin/f0): manifest unknown: r/gone:v1");
    expect(await s.stager.stage(c1, osc("r/gone:v1"), undefined, undefined, signal)).toMatchObject({ requeueAfterMs: 10_000 });
    expect((await readStageRecord(s.host, c1))?.state).toBe("failed");
    expect(await s.stager.stage(c2, osc(), undefined, undefined, signal)).toEqual({ kind: "nothing" });
  });

  test("refuses to grow past the size bound or past 90 % of the free space", async () => {
    const bound = await setup({ content: { "r/a:v1": bytes(600, 1), "r/b:v1": bytes(600, 2) }, maxBytes: 1_000 });
    const over = await bound.stager.stage(c1, osc("r/a:v1", "r/b:v1"), undefined, undefined, signal);
    expect(over.kind === "failed" && over.message).toContain(
      "image r/b:v1 (file /opt/bin/f1): staging 1200 bytes would exceed the stage size bound of 1000 bytes",
    );
    expect(await readdir(join(bound.root, "var/lib/gardener-node-agent/staged/blobs"))).toEqual([]);

    const disk = await setup({ content: { "r/a:v1": bytes(600, 1) }, freeBytes: 600 });
    const full = await disk.stager.stage(c1, osc("r/a:v1"), undefined, undefined, signal);
    expect(full.kind === "failed" && full.message).toContain(
      "would exceed the free space of the stage's file system minus 10 % (540 bytes)",
    );
  });
});
