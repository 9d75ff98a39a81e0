import { type ChunkedData, type FileWrite, HostFileKindError, type HostFs, HostPathError } from "../../../host/index.ts";
import { infoEach } from "../../../log/index.ts";
import { imageToPull } from "./agent-image.ts";
import type { StepContext } from "./context.ts";
import { fileMode, warnDroppedModeBits } from "./modes.ts";
import { collectAfterBigWrite, inlineContentChars } from "./collect.ts";
import { checkAgentBinary, type PlannedFiles } from "../plan/content.ts";

/** A file cannot be placed (e.g. its cross-device helper name is taken by a directory). */
export class FileApplyError extends Error {
  override readonly name = "FileApplyError";
  constructor(
    message: string,
    readonly path: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

const dirName = (p: string) => p.slice(0, p.lastIndexOf("/")) || "/";
const baseName = (p: string) => p.slice(p.lastIndexOf("/") + 1);
/** Upstream's cross-device helper name beside `path`. */
const helperName = (p: string) => `.${baseName(p)}.tmp`;

/** Writes a file atomically with the exact mode (§6.1), honouring upstream's helper name (see below). */
export async function placeFile(host: HostFs, path: string, bytes: Uint8Array, mode: number): Promise<void> {
  await clearHelperName(host, path);
  await host.writeFileAtomic(path, bytes, mode);
}

/**
 * Upstream's cross-device helper `<dir>/.<name>.tmp`: a stale file is removed, a directory is an error.
 * `listing` (the directory's entries, undefined when it is missing) saves a lookup per file in a group.
 */
async function clearHelperName(host: HostFs, path: string, listing?: ReadonlySet<string>): Promise<void> {
  const dir = dirName(path);
  const name = helperName(path);
  if (listing !== undefined && !listing.has(name)) return;
  const helper = `${dir === "/" ? "" : dir}/${name}`;
  const st = await host.stat(helper);
  if (st?.kind === "dir") throw new FileApplyError(`cannot write "${path}": "${helper}" is a directory`, path);
  if (st !== undefined) await host.remove(helper);
}

/**
 * Step 13: inline and secretRef files as one group, written and made durable together; the record rides
 * on the next changes-file write (a crash before it rewrites the same bytes, harmless). `changesFile`
 * joins the group: one durability point, so no file counts as done before its own write was durable.
 */
export async function writeChangedFiles(
  ctx: StepContext,
  planned: PlannedFiles,
  opts: {
    readonly changesFile?: (FileWrite & { readonly data: ChunkedData }) | undefined;
    /** Directories listed already (the plan's target check); the others are listed here. */
    readonly listings?: ReadonlyMap<string, ReadonlySet<string>>;
  } = {},
): Promise<void> {
  const { host, log } = ctx.ports;
  const { changesFile } = opts;
  const writes: FileWrite[] = [];
  const files = ctx.store.changes.files.changed.filter((f) => f.content.inline !== undefined || f.content.secretRef !== undefined);
  // Each directory is listed once, all of them at the same time (read-only), unless the plan did.
  const dirs = [...new Set(files.map((f) => dirName(f.path)))].filter((d) => opts.listings?.has(d) !== true);
  const listed = await Promise.all(dirs.map(async (d) => new Set(await listOrEmpty(host, d))));
  const listings = new Map<string, ReadonlySet<string>>([
    ...(opts.listings ?? []),
    ...dirs.map((d, i) => [d, listed[i] ?? new Set<string>()] as const),
  ]);
  for (const f of files) {
    const content = planned.write(f.path);
    if (content === undefined) throw new FileApplyError(`no planned content for file "${f.path}"`, f.path);
    const listing = listings.get(dirName(f.path));
    // The helper name is almost never taken: no call (and no promise) per file then.
    if (listing === undefined || listing.has(helperName(f.path))) await clearHelperName(host, f.path, listing);
    writes.push({ path: f.path, ...content, mode: fileMode(f) });
  }
  await warnDroppedModeBits(ctx, files);
  if (writes.length === 0) {
    if (changesFile !== undefined) await host.writeFileAtomic(changesFile.path, changesFile.data, changesFile.mode);
    return;
  }
  ctx.signal.throwIfAborted();
  // In place with durable contents; the directory entries become durable while the apply goes on, and
  // the record that these files are done is not written before they are (ChangesStore.defer).
  // The record (as long as the contents, issue 27) is encoded last, once the other temps' garbage is
  // collected, and collected again before the next steps; the renames keep the record first.
  const contentChars = inlineContentChars(ctx.store.changes);
  const record: FileWrite[] =
    changesFile === undefined
      ? []
      : [
          {
            ...changesFile,
            late: true,
            data: {
              writeTo: (write) => {
                collectAfterBigWrite(contentChars, log, "file temps");
                changesFile.data.writeTo(write);
              },
            },
          },
        ];
  const { durable } = await host.writeFilesInPlace([...record, ...writes]);
  collectAfterBigWrite(contentChars, log);
  // Written now, in one write where the sink takes lines: these files are in place.
  infoEach(
    log,
    "Wrote file",
    writes.map((w) => ({ path: w.path })),
  );
  await ctx.store.filesChangedDone(
    writes.map((w) => w.path),
    { deferred: true, durable },
  );
}

/** Entry names of `dir`; none when it is missing or not a directory (the write then reports the real problem). */
async function listOrEmpty(host: HostFs, dir: string): Promise<readonly string[]> {
  try {
    return (await host.list(dir)) ?? [];
  } catch (err) {
    if (err instanceof HostFileKindError) return [];
    throw err;
  }
}

/**
 * Renames a staged blob into place as a hard link (no second copy); false when it must be copied instead.
 * The live file and the blob share one inode, so: a blob already linked elsewhere is copied (a chmod for
 * this file would change the other's mode); the mode set here changes the blob's too (its directory is
 * 0700); an in-place edit of the live file changes the blob, which the digest check before any later
 * use refuses (that version is then pulled again); replacing or pruning either name leaves the other.
 */
async function linkStaged(host: HostFs, blob: string, path: string, mode: number): Promise<boolean> {
  if ((await host.stat(blob))?.links !== 1) return false;
  await clearHelperName(host, path);
  try {
    await host.linkAtomic(blob, path, mode);
    return true;
  } catch (err) {
    if (err instanceof HostFileKindError || err instanceof HostPathError) throw err;
    return false; // EXDEV (another file system), EPERM, EMLINK…: copied as without a stage
  }
}

/** Step 15: imageRef files; the agent's own binary must be an executable for this machine. */
export async function writeImageFiles(ctx: StepContext): Promise<void> {
  const { host, log, extractImageFile, arch } = ctx.ports;
  for (const f of [...ctx.store.changes.files.changed]) {
    const ref = f.content.imageRef;
    if (ref === undefined || f.content.inline !== undefined || f.content.secretRef !== undefined) continue;
    // Staged (issue 23): fetched and verified before the gates opened; else pulled now.
    const staged = await ctx.ports.staged?.imageFile(ref.image, ref.filePathInImage);
    const bytes = staged?.bytes ?? (await extractImageFile(await imageToPull(ctx, f.path, ref.image), ref.filePathInImage, ctx.signal));
    // The reconcile's failure event names the refused file; the old binary stays in place.
    checkAgentBinary(f.path, bytes, arch, `image ${ref.image}`, false);
    await warnDroppedModeBits(ctx, [f]);
    if (staged === undefined || !(await linkStaged(host, staged.blob, f.path, fileMode(f))))
      await placeFile(host, f.path, bytes, fileMode(f));
    log.info("Wrote file from image", { path: f.path, image: ref.image });
    await ctx.store.fileChangedDone(f.path);
  }
}

/**
 * Step 23: removed files; a file the token controller syncs is handed back to it. Removing is
 * idempotent, so all removals are recorded with one write of the changes file.
 */
export async function deleteRemovedFiles(ctx: StepContext): Promise<void> {
  const { host, log, config, onTokenResync } = ctx.ports;
  const files = [...ctx.store.changes.files.deleted];
  if (files.length === 0) return;
  for (const f of files) {
    ctx.signal.throwIfAborted();
    await host.remove(f.path);
    log.info("Removed file", { path: f.path });
    for (const s of config.tokenSyncConfigs) {
      if (s.path === f.path) onTokenResync({ namespace: "kube-system", name: s.secretName });
    }
  }
  await ctx.store.filesDeletedDone(files.map((f) => f.path));
}
