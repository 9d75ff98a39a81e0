import { RegistryError } from "./errors.ts";

const BLOCK = 512;

/** What a layer says about one path. */
export type TarLookup =
  | { readonly kind: "file"; readonly data: Uint8Array; readonly mode: number }
  | { readonly kind: "not-regular"; readonly type: string }
  /** Deleted by a whiteout (`.wh.<name>`) or hidden by an opaque parent (`.wh..wh..opq`). */
  | { readonly kind: "whiteout" }
  | { readonly kind: "absent" };

/** "./a/b", "/a/b/", "a//b" → "a/b". */
export function normalizeTarPath(name: string): string {
  return name
    .split("/")
    .filter((s) => s !== "" && s !== ".")
    .join("/");
}

/**
 * Finds `path` in an uncompressed tar (ustar, GNU long names, pax `path`/`size` headers).
 * The last entry for a path wins, as when the archive is unpacked. Layer whiteouts for the path
 * or an opaque marker in one of its parents are reported, so the caller can stop at this layer.
 */
export function findInTar(tar: Uint8Array, path: string): TarLookup {
  const wanted = normalizeTarPath(path);
  const slash = wanted.lastIndexOf("/");
  const dir = slash < 0 ? "" : wanted.slice(0, slash);
  const whiteout = `${dir === "" ? "" : `${dir}/`}.wh.${wanted.slice(slash + 1)}`;
  const parents = wanted
    .split("/")
    .slice(0, -1)
    .map((_, i, all) => all.slice(0, i + 1).join("/"));
  const opaque = new Set(["", ...parents].map((p) => (p === "" ? ".wh..wh..opq" : `${p}/.wh..wh..opq`)));

  let result: TarLookup = { kind: "absent" };
  let hidden = false;
  let longName: string | undefined;
  let paxPath: string | undefined;
  let paxSize: number | undefined;
  let offset = 0;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((b) => b === 0)) break; // end-of-archive marker
    verifyChecksum(header, offset);
    const type = String.fromCharCode(header[156] ?? 0x30);
    const size = paxSize ?? parseNumber(header.subarray(124, 136), offset);
    const dataStart = offset + BLOCK;
    const dataEnd = dataStart + size;
    if (dataEnd > tar.length) throw new RegistryError(`tar entry at ${offset} runs past the end of the layer`);
    const data = tar.subarray(dataStart, dataEnd);
    offset = dataStart + Math.ceil(size / BLOCK) * BLOCK;

    if (type === "L") {
      longName = cString(data);
      continue;
    }
    if (type === "x") {
      const pax = parsePax(data);
      paxPath = pax.get("path");
      const s = pax.get("size");
      paxSize = s !== undefined ? Number(s) : undefined;
      continue;
    }
    if (type === "g" || type === "K") continue; // global pax defaults, GNU long link names: not needed
    const magic = cString(header.subarray(257, 263));
    const prefix = magic === "ustar" ? cString(header.subarray(345, 500)) : "";
    const raw = paxPath ?? longName ?? (prefix !== "" ? `${prefix}/${cString(header.subarray(0, 100))}` : cString(header.subarray(0, 100)));
    longName = paxPath = undefined;
    paxSize = undefined;
    const name = normalizeTarPath(raw);
    if (opaque.has(name)) hidden = true;
    if (name === whiteout) result = { kind: "whiteout" };
    if (name !== wanted) continue;
    if (type === "0" || type === "\0" || type === "7") {
      result = { kind: "file", data, mode: parseNumber(header.subarray(100, 108), offset) & 0o7777 };
    } else {
      result = { kind: "not-regular", type };
    }
  }
  if (result.kind === "absent" && hidden) return { kind: "whiteout" };
  return result;
}

function cString(bytes: Uint8Array): string {
  const end = bytes.indexOf(0);
  return new TextDecoder().decode(end < 0 ? bytes : bytes.subarray(0, end));
}

/** Octal text, or GNU base-256 when the high bit of the first byte is set. */
function parseNumber(field: Uint8Array, at: number): number {
  if (((field[0] ?? 0) & 0x80) !== 0) {
    let n = (field[0] ?? 0) & 0x7f;
    for (let i = 1; i < field.length; i++) n = n * 256 + (field[i] ?? 0);
    return n;
  }
  const text = cString(field).trim();
  if (text === "") return 0;
  if (!/^[0-7]+$/.test(text)) throw new RegistryError(`tar header at ${at} has a bad numeric field (not octal digits)`);
  return parseInt(text, 8);
}

function verifyChecksum(header: Uint8Array, at: number): void {
  const stored = parseNumber(header.subarray(148, 156), at);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (header[i] ?? 0);
  if (sum !== stored) throw new RegistryError(`tar header at ${at} has a bad checksum (not a tar layer?)`);
}

/** pax records: "<len> <key>=<value>\n". */
function parsePax(data: Uint8Array): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  while (i < data.length) {
    const space = data.indexOf(0x20, i);
    if (space < 0) break;
    const len = Number(new TextDecoder().decode(data.subarray(i, space)));
    if (!Number.isInteger(len) || len <= 0 || i + len > data.length) break;
    const record = new TextDecoder().decode(data.subarray(space + 1, i + len - 1));
    const eq = record.indexOf("=");
    if (eq > 0) out.set(record.slice(0, eq), record.slice(eq + 1));
    i += len;
  }
  return out;
}
