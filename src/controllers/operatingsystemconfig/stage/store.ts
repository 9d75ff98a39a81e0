import * as v from "valibot";
import type { HostFs } from "../../../host/index.ts";
import { sha256Digest } from "../../../registry/index.ts";
import { stateDir } from "../constants.ts";

/** Where pending versions are staged (issue 23): content-addressed blobs and one record per version. */
const stageDir = `${stateDir}/staged`;
const blobDir = `${stageDir}/blobs`;
const versionDir = `${stageDir}/versions`;
const dirMode = 0o700;
const blobMode = 0o600;

const fileSchema = v.object({
  path: v.string(),
  digest: v.pipe(v.string(), v.regex(/^sha256:[0-9a-f]{64}$/)),
  size: v.number(),
  /** `image <ref> <path in image>` or `secret <name> <key>`: what the apply asks the stage for. */
  source: v.string(),
});

const recordSchema = v.object({
  checksum: v.string(),
  state: v.picklist(["staging", "staged", "failed"]),
  /** Why staging failed (names the image or Secret, never content). */
  why: v.optional(v.string()),
  /** Bytes of this version's staged content. */
  bytes: v.number(),
  /** RFC 3339, when the state was last written. */
  at: v.string(),
  files: v.array(fileSchema),
});

export type StagedFile = v.InferOutput<typeof fileSchema>;
export type StageRecord = v.InferOutput<typeof recordSchema>;

const versionPath = (checksum: string) => `${versionDir}/${checksum}.json`;
export const blobPath = (digest: string) => `${blobDir}/${digest.replace(":", "-")}`;
/** A checksum names a file here: hex only (the Secret's annotation), anything else is never staged. */
export const stageableChecksum = (checksum: string): boolean => /^[0-9a-f]{1,128}$/.test(checksum);

/** The staged record of `checksum`; undefined when there is none or it cannot be read (it is then staged again). */
export async function readStageRecord(host: HostFs, checksum: string): Promise<StageRecord | undefined> {
  if (!stageableChecksum(checksum)) return undefined;
  let text: string | undefined;
  try {
    text = await host.readText(versionPath(checksum));
  } catch {
    return undefined;
  }
  if (text === undefined) return undefined;
  try {
    const parsed = v.safeParse(recordSchema, JSON.parse(text));
    return parsed.success ? parsed.output : undefined;
  } catch {
    return undefined;
  }
}

/** Every readable version record in the stage (`status`, `diff`). */
export async function listStageRecords(host: HostFs): Promise<StageRecord[]> {
  const names = (await host.list(versionDir).catch(() => undefined)) ?? [];
  const records = await Promise.all(names.filter((n) => n.endsWith(".json")).map((n) => readStageRecord(host, n.slice(0, -5))));
  return records.filter((r) => r !== undefined);
}

/** One line for `status` and `diff`: "staged (2 files, 41943040 bytes)", "staging since …", "failed: why". */
export function stageStateText(rec: StageRecord): string {
  if (rec.state === "staged") return `staged (${rec.files.length} file(s), ${rec.bytes} bytes)`;
  if (rec.state === "staging") return `staging since ${rec.at}`;
  return `failed at ${rec.at}: ${rec.why ?? "unknown reason"}`;
}

/** The stage directory on the host: versions, blobs, their sizes, and what may be removed. */
export class StageStore {
  constructor(private readonly host: HostFs) {}

  async ensure(): Promise<void> {
    await this.host.ensureDir(stageDir, dirMode);
    await this.host.ensureDir(blobDir, dirMode);
    await this.host.ensureDir(versionDir, dirMode);
    // ensureDir leaves an existing directory's mode alone; the stage is the agent's only.
    await this.host.chmod(stageDir, dirMode);
  }

  async writeRecord(rec: StageRecord): Promise<void> {
    await this.host.writeFileAtomic(versionPath(rec.checksum), JSON.stringify(rec), blobMode, { durable: false });
  }

  async hasBlob(f: Pick<StagedFile, "digest" | "size">): Promise<boolean> {
    const st = await this.host.stat(blobPath(f.digest));
    return st?.kind === "file" && st.size === f.size;
  }

  /** Stores `bytes` under their digest (a blob already there is kept: same digest, same bytes). */
  async putBlob(bytes: Uint8Array): Promise<{ digest: string; added: boolean }> {
    const digest = sha256Digest(bytes);
    if (await this.hasBlob({ digest, size: bytes.byteLength })) return { digest, added: false };
    await this.host.writeFileAtomic(blobPath(digest), bytes, blobMode);
    return { digest, added: true };
  }

  /** The blob's bytes, checked against its digest; undefined when missing or changed on disk. */
  async readBlob(f: StagedFile): Promise<Uint8Array | undefined> {
    const bytes = await this.host.readFile(blobPath(f.digest));
    if (bytes === undefined || sha256Digest(bytes) !== f.digest) return undefined;
    return bytes;
  }

  /** Total size of every blob in the stage. */
  async blobBytes(): Promise<number> {
    let total = 0;
    for (const name of (await this.host.list(blobDir)) ?? []) {
      const st = await this.host.stat(`${blobDir}/${name}`);
      if (st?.kind === "file") total += st.size;
    }
    return total;
  }

  freeBytes(): Promise<number | undefined> {
    return this.host.freeBytes(stageDir);
  }

  /**
   * Removes every version record not in `keep`, every blob no kept record names, and anything else
   * in the stage directory. Returns the checksums removed.
   */
  async prune(keep: ReadonlySet<string>): Promise<string[]> {
    const removed: string[] = [];
    const referenced = new Set<string>();
    for (const name of (await this.host.list(versionDir)) ?? []) {
      const checksum = name.endsWith(".json") ? name.slice(0, -".json".length) : "";
      const rec = keep.has(checksum) ? await readStageRecord(this.host, checksum) : undefined;
      if (rec === undefined) {
        await this.host.removeAll(`${versionDir}/${name}`);
        if (checksum !== "") removed.push(checksum);
        continue;
      }
      for (const f of rec.files) referenced.add(blobPath(f.digest));
    }
    for (const name of (await this.host.list(blobDir)) ?? []) {
      if (!referenced.has(`${blobDir}/${name}`)) await this.host.removeAll(`${blobDir}/${name}`);
    }
    for (const name of (await this.host.list(stageDir)) ?? []) {
      if (name !== "blobs" && name !== "versions") await this.host.removeAll(`${stageDir}/${name}`);
    }
    return removed;
  }
}
