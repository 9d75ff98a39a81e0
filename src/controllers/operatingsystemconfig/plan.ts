import { isNotFound } from "../../kube/errors.ts";
import { secrets } from "../../kube/resources.ts";
import type { Kube, KubeObject } from "../../kube/types.ts";
import { decodeBase64Strict, decodeInline, type OscChanges, type OscFile } from "../../osc/index.ts";
import { isExecutableFor } from "../../registry/index.ts";
import { agentBinaryPath } from "./deps.ts";

/** The OSC asks for something the agent must not or cannot do; nothing on the host was touched. */
export class OscInputError extends Error {
  override readonly name = "OscInputError";
  constructor(
    message: string,
    /** The file path or unit name at fault. */
    readonly subject: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Absolute, normalised host path without "." / ".." segments. */
export function validateFilePath(path: string): void {
  if (!path.startsWith("/")) throw new OscInputError(`file path "${path}" is not absolute`, path);
  const segs = path.split("/").slice(1);
  if (segs.some((s) => s === "." || s === "..") || path.includes("\0")) {
    throw new OscInputError(`file path "${path}" must not contain "." or ".." segments`, path);
  }
  if (segs.at(-1) === "") throw new OscInputError(`file path "${path}" names a directory`, path);
}

/** A unit or drop-in name becomes one file name under /etc/systemd/system. */
export function validateUnitName(name: string, what = "unit"): void {
  if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
    throw new OscInputError(`invalid ${what} name "${name}"`, name);
  }
}

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
    if (isNotFound(err)) throw new OscInputError(`file "${path}": secret "${name}" not found`, path, { cause: err });
    throw err;
  }
  const bytes = secretValue(secret, dataKey);
  if (bytes === undefined) throw new OscInputError(`file "${path}": secret "${name}" does not contain key "${dataKey}"`, path);
  return bytes;
}

/**
 * Everything that can be checked before the host is touched: file paths, unit and drop-in names,
 * and the bytes of every inline/secretRef file still to be written (decoded now, written later).
 */
export async function planChanges(kube: Kube, changes: OscChanges, arch: string, signal: AbortSignal): Promise<Map<string, Uint8Array>> {
  const bytes = new Map<string, Uint8Array>();
  for (const f of [...changes.files.changed, ...changes.files.deleted]) validateFilePath(f.path);
  for (const u of [...changes.units.changed, ...changes.units.deleted]) {
    validateUnitName(u.name);
    for (const d of u.dropIns ?? []) validateUnitName(d.name, "drop-in");
  }
  for (const u of changes.units.changed) {
    for (const d of [...u.dropInsChanges.changed, ...u.dropInsChanges.deleted]) validateUnitName(d.name, "drop-in");
  }
  for (const f of changes.files.changed) {
    const b = await fileBytes(kube, f, signal);
    if (b === undefined) continue;
    checkAgentBinary(f.path, b, arch, "inline content");
    bytes.set(f.path, b);
  }
  return bytes;
}

export async function fileBytes(kube: Kube, f: OscFile, signal: AbortSignal): Promise<Uint8Array | undefined> {
  const inline = f.content.inline;
  if (inline !== undefined) {
    try {
      return decodeInline(inline.encoding, inline.data);
    } catch (err) {
      throw new OscInputError(`file "${f.path}": ${(err as Error).message}`, f.path, { cause: err });
    }
  }
  const ref = f.content.secretRef;
  if (ref !== undefined) return secretRefBytes(kube, ref.name, ref.dataKey, f.path, signal);
  return undefined;
}

/** The agent replaces itself only with an executable for this machine (checked for every content source). */
export function checkAgentBinary(path: string, bytes: Uint8Array, arch: string, source: string): void {
  if (path === agentBinaryPath && !isExecutableFor(bytes, arch)) {
    throw new OscInputError(`refusing to install "${path}" from ${source}: not an executable for ${arch}`, path);
  }
}
