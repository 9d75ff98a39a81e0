import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs, type HostFs } from "../../host/index.ts";
import { decodeOsc, digestEncoding, encodeOsc } from "../../osc/index.ts";
import { bigTextChars } from "../../text/index.ts";
import { readLastApplied, readLastAppliedDigests, readLastAppliedWithTypeMeta, writeLastApplied } from "./last-applied.ts";

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

  /** Calls of the ways to learn the file's contents (hashing it, reading it), watched on the memo's own HostFs. */
  const watchReads = () => {
    const reads: string[] = [];
    const { sha256, readFile } = host;
    host.sha256 = (path) => (reads.push(`sha256 ${path}`), sha256.call(host, path));
    host.readFile = (path) => (reads.push(`read ${path}`), readFile.call(host, path));
    return reads;
  };
  const lastAppliedOnDisk = () => join(root, "var/lib/gardener-node-agent/last-applied-osc.yaml");

  test("should know the file it wrote by its stamp, neither hashing nor reading it", async () => {
    await writeLastApplied(host, decodeOsc(typed));
    const reads = watchReads();
    const first = await readLastAppliedDigests(host);
    expect(first?.spec.units?.map((u) => u.name)).toEqual(["kubelet.service"]);
    expect(await readLastAppliedDigests(host)).toBe(first as NonNullable<typeof first>);
    expect(reads).toEqual([]);
  });

  // Same size as `typed`, so that only the inode or the modification time tells the files apart.
  const sameSize = typed.replace("kubelet.service", "kubelet.servicf");
  test.each([
    [
      "replaced by a rename",
      async () => {
        await writeFile(`${lastAppliedOnDisk()}.new`, sameSize);
        await rename(`${lastAppliedOnDisk()}.new`, lastAppliedOnDisk());
      },
    ],
    [
      "edited in place (size kept, a later modification time)",
      async () => {
        const { mtime } = await stat(lastAppliedOnDisk());
        await writeFile(lastAppliedOnDisk(), sameSize);
        await utimes(lastAppliedOnDisk(), mtime, new Date(mtime.getTime() + 1_000));
      },
    ],
  ])("should read and decode the file again once it was %s", async (_, change) => {
    await writeLastApplied(host, decodeOsc(typed));
    await change();
    expect((await stat(lastAppliedOnDisk())).size).toBe(Buffer.byteLength(typed));
    const reads = watchReads();
    expect((await readLastAppliedDigests(host))?.spec.units?.map((u) => u.name)).toEqual(["kubelet.servicf"]);
    expect(reads).toContain("read /var/lib/gardener-node-agent/last-applied-osc.yaml");
  });

  test("should read and decode the file in a new process (no stamp remembered)", async () => {
    await writeLastApplied(host, decodeOsc(typed));
    host = createHostFs(root); // the memo is per HostFs, as it is per process
    const reads = watchReads();
    expect((await readLastAppliedDigests(host))?.spec.units?.map((u) => u.name)).toEqual(["kubelet.service"]);
    expect(reads).toEqual(["read /var/lib/gardener-node-agent/last-applied-osc.yaml"]);
  });

  test("should decode afresh when the file changed on disk", async () => {
    await writeLastApplied(host, decodeOsc(typed));
    await onDisk(untyped);
    expect((await readLastApplied(host))?.spec.units?.map((u) => u.name)).toEqual(["containerd.service"]);
  });
});

describe("a big last-applied OSC (issue 27)", () => {
  // Past bigTextChars as text: 1,100 files of 4,000 base64 characters each.
  const bigOsc = () =>
    decodeOsc(
      `${typed}  files:\n${Array.from(
        { length: 1_100 },
        (_, i) =>
          `  - path: /f/${i}\n    permissions: 420\n    content:\n      inline: {encoding: b64, data: ${`A${String(i).padStart(4, "0")}`.repeat(800)}}\n`,
      ).join("")}`,
    );
  const dataOf = (files: readonly { readonly content: { readonly inline?: { readonly data: string } | undefined } }[] | undefined) =>
    files?.map((f) => f.content.inline?.data);

  test.each([
    ["written by this process", (osc: ReturnType<typeof decodeOsc>) => writeLastApplied(host, osc)],
    ["found on disk", (osc: ReturnType<typeof decodeOsc>) => onDisk(encodeOsc(osc))],
  ])("should keep only file digests in memory when %s, and give the contents to readers that ask", async (_, store) => {
    const osc = bigOsc();
    expect(encodeOsc(osc).length).toBeGreaterThan(bigTextChars);
    await store(osc);
    const digests = await readLastAppliedDigests(host);
    expect(digests?.spec.files).toHaveLength(1_100);
    expect(digests?.spec.files?.every((f) => f.content.inline?.encoding === digestEncoding && f.content.inline.data.length === 64)).toBe(
      true,
    );
    expect(digests?.spec.files?.[7]?.permissions).toBe(420);
    expect(digests?.spec.units?.map((u) => u.name)).toEqual(["kubelet.service"]);
    expect(await readLastAppliedDigests(host)).toBe(digests as NonNullable<typeof digests>);
    expect(dataOf((await readLastApplied(host))?.spec.files)).toEqual(dataOf(osc.spec.files));
    expect((await readLastApplied(host))?.spec.files?.[3]?.content.inline?.encoding).toBe("b64");
  });

  test("should write the encoder's exact bytes with mode 0600 and know them by their digest, non-ASCII contents included", async () => {
    // Multi-byte characters (2, 3 and 4 bytes) over many of the writer's buffer ends.
    const unicode = decodeOsc(
      JSON.stringify({
        spec: {
          files: Array.from({ length: 300 }, (_, i) => ({
            path: `/f/${i}`,
            content: { inline: { data: `${"é✓😀".repeat(5_000)}\n${"x".repeat(i)}${"😀".repeat(2_000)}` } },
          })),
        },
      }),
    );
    for (const osc of [bigOsc(), unicode]) {
      const expected = Buffer.from(encodeOsc(osc), "utf8");
      expect(expected.length).toBeGreaterThan(bigTextChars);
      expect(await writeLastApplied(host, osc)).toBe(expected.length);
      const path = join(root, "var/lib/gardener-node-agent/last-applied-osc.yaml");
      expect(readFileSync(path).equals(expected)).toBe(true);
      expect(statSync(path).mode & 0o7777).toBe(0o600);
      expect(readdirSync(join(root, "var/lib/gardener-node-agent"))).toEqual(["last-applied-osc.yaml"]);
      // The memo's digest is the file's: the next read takes the remembered form without reading the file.
      expect(await host.sha256("/var/lib/gardener-node-agent/last-applied-osc.yaml")).toBe(
        new Bun.CryptoHasher("sha256").update(expected).digest("hex"),
      );
      const readFile = host.readFile;
      host.readFile = () => Promise.reject(new Error("read whole"));
      try {
        expect((await readLastAppliedDigests(host))?.spec.files).toHaveLength(osc.spec.files?.length ?? 0);
      } finally {
        host.readFile = readFile;
      }
      expect(dataOf((await readLastApplied(host))?.spec.files)).toEqual(dataOf(osc.spec.files));
    }
  });

  test("should keep a small OSC whole (readers share it)", async () => {
    await writeLastApplied(host, decodeOsc(`${typed}  files:\n  - path: /a\n    content:\n      inline: {data: x}\n`));
    expect(await readLastAppliedDigests(host)).toBe(
      (await readLastApplied(host)) as NonNullable<Awaited<ReturnType<typeof readLastApplied>>>,
    );
    expect((await readLastAppliedDigests(host))?.spec.files?.[0]?.content.inline?.data).toBe("x");
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
