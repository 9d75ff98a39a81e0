import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs, type HostFs } from "../../host/index.ts";
import { decodeOsc } from "../../osc/index.ts";
import { readLastApplied, readLastAppliedWithTypeMeta, writeLastApplied } from "./last-applied.ts";

const typed = [
  "apiVersion: extensions.gardener.cloud/v1alpha1",
  "kind: OperatingSystemConfig",
  "spec:",
  "  units:",
  "  - name: kubelet.service",
  "",
].join("\n");
const untyped = ["spec:", "  units:", "  - name: containerd.service", ""].join("\n");

let root: string;
let host: HostFs;
const onDisk = (text: string) => writeFile(join(root, "var/lib/gardener-node-agent/last-applied-osc.yaml"), text);

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "last-applied-"));
  await mkdir(join(root, "var/lib/gardener-node-agent"), { recursive: true });
  host = createHostFs(root);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("readLastApplied", () => {
  test("should return undefined before the first apply", async () => {
    expect(await readLastApplied(host)).toBeUndefined();
    expect(await readLastAppliedWithTypeMeta(host)).toBeUndefined();
  });

  test("should hand out one frozen decoded OSC while the file is unchanged", async () => {
    await writeLastApplied(host, decodeOsc(typed));
    const first = await readLastApplied(host);
    expect(first?.spec.units?.map((u) => u.name)).toEqual(["kubelet.service"]);
    expect(await readLastApplied(host)).toBe(first as NonNullable<typeof first>);
    expect(Object.isFrozen(first)).toBe(true);
  });

  test("should know the file it wrote by its digest without reading it whole", async () => {
    const files = Array.from(
      { length: 400 },
      (_, i) => `  - path: /f/${i}\n    content:\n      inline: {encoding: b64, data: ${"QUJD".repeat(1000)}}\n`,
    );
    await writeLastApplied(host, decodeOsc(`${typed}  files:\n${files.join("")}`));
    const reads: string[] = [];
    const readFile = host.readFile.bind(host);
    // The memo is the HostFs's: watched on the same object.
    host.readFile = (path) => {
      reads.push(path);
      return readFile(path);
    };
    expect((await readLastApplied(host))?.spec.files).toHaveLength(400);
    expect(reads).toEqual([]);
    await onDisk(typed);
    expect((await readLastApplied(host))?.spec.files).toBeUndefined();
    expect(reads).toEqual(["/var/lib/gardener-node-agent/last-applied-osc.yaml"]);
  });

  test("should decode afresh when the file changed on disk", async () => {
    await writeLastApplied(host, decodeOsc(typed));
    await onDisk(untyped);
    expect((await readLastApplied(host))?.spec.units?.map((u) => u.name)).toEqual(["containerd.service"]);
  });
});

describe("readLastAppliedWithTypeMeta", () => {
  test.each([
    ["names apiVersion and kind", typed, true],
    ["leaves them out", untyped, false],
  ])("should tell whether the file %s", async (_, text, expected) => {
    await onDisk(text);
    const read = await readLastAppliedWithTypeMeta(host);
    expect(read?.typeMetaInFile).toBe(expected);
    // decodeOsc defaults them either way.
    expect(read?.osc.kind).toBe("OperatingSystemConfig");
  });

  test("should know that a file this process wrote names them, and read afresh once it is edited", async () => {
    await writeLastApplied(host, decodeOsc(untyped));
    expect(await Bun.file(join(root, "var/lib/gardener-node-agent/last-applied-osc.yaml")).text()).toStartWith(
      "apiVersion: extensions.gardener.cloud/v1alpha1\nkind: OperatingSystemConfig\n",
    );
    expect((await readLastAppliedWithTypeMeta(host))?.typeMetaInFile).toBe(true);
    await onDisk(untyped);
    expect((await readLastAppliedWithTypeMeta(host))?.typeMetaInFile).toBe(false);
  });
});
