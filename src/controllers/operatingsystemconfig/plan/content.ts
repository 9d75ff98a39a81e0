import { isNotFound, secrets, type Kube, type KubeObject } from "../../../kube/index.ts";
import type { FileWrite } from "../../../host/index.ts";
import {
  checkInline,
  decodeBase64Strict,
  decodeCheckedBase64Into,
  decodeInline,
  type OscChanges,
  type OscFile,
} from "../../../osc/index.ts";
import { isExecutableFor } from "../../../registry/index.ts";
import { agentBinaryPath } from "../constants.ts";
import { OscInputError } from "./input-error.ts";
import { validateDropInName, validateFilePath, validateRemovedUnitName, validateUnitName } from "./names.ts";
import { errorText } from "../../../log/index.ts";

/** Secret `data` values, base64-decoded. */
export function secretValue(secret: KubeObject, key: string): Uint8Array | undefined {
  const data = secret["data"];
  if (data === null || typeof data !== "object") return undefined;
  const v = (data as Record<string, unknown>)[key];
  return typeof v === "string" ? decodeBase64Strict(v) : undefined;
}

async function secretRefBytes(kube: Kube, name: string, dataKey: string, path: string, signal: AbortSignal): Promise<Uint8Array> {
  let secret: KubeObject;
  try {
    // Uncached: file secrets are not in the informer's scope (§6.1).
    secret = await kube.get<KubeObject>(secrets, "kube-system", name, { signal });
  } catch (err) {
    if (isNotFound(err)) throw new OscInputError(`file "${path}": secret "${name}" not found`, path, { cause: err, permanent: false });
    throw err;
  }
  let bytes: Uint8Array | undefined;
  try {
    bytes = secretValue(secret, dataKey);
  } catch (err) {
    throw new OscInputError(`file "${path}": secret "${name}" key "${dataKey}": ${errorText(err)}`, path, { cause: err, permanent: false });
  }
  if (bytes === undefined) {
    throw new OscInputError(`file "${path}": secret "${name}" does not contain key "${dataKey}"`, path, { permanent: false });
  }
  return bytes;
}

/** secretRef content staged before the gates opened (stage/); undefined: fetched now. */
interface StagedSecrets {
  secretFile(name: string, dataKey: string): Promise<Uint8Array | undefined>;
}

type Inline = NonNullable<OscFile["content"]["inline"]>;

/**
 * Every inline and secretRef file's checked content. Inline content stays the OSC's string until written
 * (decoded by the writer), so a 1000-file apply holds no second copy of every file's bytes.
 */
export class PlannedFiles {
  readonly #contents = new Map<string, Inline | Uint8Array>();

  /** Records `path`'s content, checked by the caller. */
  set(path: string, content: Inline | Uint8Array): void {
    this.#contents.set(path, content);
  }

  has(path: string): boolean {
    return this.#contents.has(path);
  }

  /** The bytes of `path` (decoded now, a copy each call), undefined when the plan has no content for it. */
  get(path: string): Uint8Array | undefined {
    const c = this.#contents.get(path);
    return c === undefined || c instanceof Uint8Array ? c : decodeInline(c.encoding, c.data);
  }

  /**
   * What a group write of `path` is given: base64 is decoded when the file's temp is written, into a
   * buffer that goes back to a pool once written (a 5,000-file apply otherwise leaves ~15 MB of decoded
   * copies for the collector, issue 27).
   */
  write(path: string): Pick<FileWrite, "data" | "written"> | undefined {
    const c = this.#contents.get(path);
    if (c === undefined || c instanceof Uint8Array) return c === undefined ? undefined : { data: c };
    if (c.encoding === "") return { data: c.data };
    const { encoding, data } = c;
    if (encoding !== "b64") return { data: () => decodeInline(encoding, data) };
    let held: Buffer | undefined;
    return {
      data: () => {
        const decoded = decodeCheckedBase64Into(data, this.#scratch.pop());
        held = decoded.buffer;
        return decoded.bytes;
      },
      written: () => {
        if (held !== undefined && held.length <= maxScratchBytes) this.#scratch.push(held);
        held = undefined;
      },
    };
  }

  /** Decode buffers free for the next file (as many as a group writes at once, at most). */
  readonly #scratch: Buffer[] = [];
}

/** A bigger file's decode buffer is not kept for the next one. */
const maxScratchBytes = 1024 * 1024;

/**
 * Everything that can be checked before the host is touched: file paths, unit and drop-in names,
 * and the content of every inline/secretRef file still to be written (checked now, decoded when written).
 */
export async function planChanges(
  kube: Kube,
  changes: OscChanges,
  arch: string,
  signal: AbortSignal,
  staged?: StagedSecrets,
): Promise<PlannedFiles> {
  const planned = new PlannedFiles();
  for (const f of [...changes.files.changed, ...changes.files.deleted]) validateFilePath(f.path);
  for (const u of changes.units.changed) validateUnitName(u.name);
  for (const u of changes.units.deleted) validateRemovedUnitName(u.name);
  for (const u of [...changes.units.changed, ...changes.units.deleted]) {
    for (const d of u.dropIns ?? []) validateDropInName(u.name, d.name);
  }
  for (const u of changes.units.changed) {
    for (const d of [...u.dropInsChanges.changed, ...u.dropInsChanges.deleted]) validateDropInName(u.name, d.name);
  }
  for (const f of changes.files.changed) {
    const inline = f.content.inline;
    if (inline !== undefined && f.path !== agentBinaryPath) {
      try {
        checkInline(inline.encoding, inline.data);
      } catch (err) {
        throw new OscInputError(`file "${f.path}": ${errorText(err)}`, f.path, { cause: err });
      }
      planned.set(f.path, inline);
      continue;
    }
    const ref = f.content.secretRef;
    const b = (ref !== undefined ? await staged?.secretFile(ref.name, ref.dataKey) : undefined) ?? (await fileBytes(kube, f, signal));
    if (b === undefined) continue;
    checkAgentBinary(f.path, b, arch, "inline content");
    planned.set(f.path, b);
  }
  return planned;
}

export async function fileBytes(kube: Kube, f: OscFile, signal: AbortSignal): Promise<Uint8Array | undefined> {
  const inline = f.content.inline;
  if (inline !== undefined) {
    try {
      return decodeInline(inline.encoding, inline.data);
    } catch (err) {
      throw new OscInputError(`file "${f.path}": ${errorText(err)}`, f.path, { cause: err });
    }
  }
  const ref = f.content.secretRef;
  if (ref !== undefined) return secretRefBytes(kube, ref.name, ref.dataKey, f.path, signal);
  return undefined;
}

/**
 * The agent replaces itself only with an executable for this machine (checked for every content source).
 * Inline content is the OSC's own (permanent); an image's may change under the same reference (retried).
 */
export function checkAgentBinary(path: string, bytes: Uint8Array, arch: string, source: string, permanent = true): void {
  if (path === agentBinaryPath && !isExecutableFor(bytes, arch)) {
    throw new OscInputError(`refusing to install "${path}" from ${source}: not an executable for ${arch}`, path, { permanent });
  }
}
