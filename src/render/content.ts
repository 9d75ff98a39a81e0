import { Base64Error, decodeInline, InvalidCodecError } from "../osc/index.ts";
import type { OscFile, Unit } from "../osc/index.ts";
import { quoteName } from "../untrusted/index.ts";
import { RenderError } from "./errors.ts";

/** Secrets referenced by `secretRef` files, by name (the OSC's namespace), then data key → bytes. */
export type RenderSecrets = Readonly<Record<string, Readonly<Record<string, Uint8Array | string>>>>;

/** A file ready to be placed: validated path, resolved bytes. */
export interface ResolvedFile {
  readonly path: string;
  readonly data: Uint8Array;
  readonly permissions: number | undefined;
  readonly transmitUnencoded: boolean;
}

/** A unit ready to be placed: content and drop-ins as text. */
export interface ResolvedUnit {
  readonly name: string;
  readonly content: string | undefined;
  readonly dropIns: readonly { readonly name: string; readonly content: string }[];
}

// Paths and names end up inside double quotes (and unit names inside single quotes) of a bash script:
// characters that bash would expand or that end the quoting are refused instead of silently mangled.
const unsafe = /["'$`\\\n\r]/;

function checkPath(field: string, path: string): void {
  if (!path.startsWith("/")) throw new RenderError("invalid", field, `path ${quoteName(path)} is not absolute`);
  if (unsafe.test(path))
    throw new RenderError("invalid", field, `path ${quoteName(path)} contains a quote, $, backtick, backslash or newline`);
}

function checkName(field: string, name: string): void {
  if (name === "" || name.includes("/") || unsafe.test(name)) throw new RenderError("invalid", field, `invalid name ${quoteName(name)}`);
}

const toBytes = (v: Uint8Array | string): Uint8Array => (typeof v === "string" ? new TextEncoder().encode(v) : v);

/** Bytes of one `spec.files[i]` (spec §12.1): inline decoded, secretRef looked up; imageRef refused. */
export function resolveFile(file: OscFile, index: number, secrets: RenderSecrets): ResolvedFile {
  const field = `spec.files[${index}]`;
  checkPath(`${field}.path`, file.path);
  const { inline, secretRef, imageRef, transmitUnencoded } = file.content;
  let data: Uint8Array;
  if (inline !== undefined) {
    try {
      data = decodeInline(inline.encoding, inline.data);
    } catch (err) {
      if (err instanceof InvalidCodecError)
        throw new RenderError("invalid", `${field}.content.inline.encoding`, err.message, { cause: err });
      if (err instanceof Base64Error) throw new RenderError("invalid", `${field}.content.inline.data`, err.message, { cause: err });
      throw err;
    }
  } else if (secretRef !== undefined) {
    const secret = secrets[secretRef.name];
    if (secret === undefined)
      throw new RenderError("secret-not-found", `${field}.content.secretRef`, `secrets "${secretRef.name}" not found`);
    // Missing key → empty content, like the upstream helper.
    data = toBytes(secret[secretRef.dataKey] ?? new Uint8Array());
  } else if (imageRef !== undefined) {
    throw new RenderError("invalid", `${field}.content.imageRef`, "imageRef files cannot be rendered into user data");
  } else {
    throw new RenderError("invalid", `${field}.content`, "one of inline or secretRef is required");
  }
  const unencoded = transmitUnencoded === true;
  if (unencoded && new TextDecoder().decode(data).split("\n").includes("EOF")) {
    // The heredoc delimiter is unquoted for compatibility; a content line "EOF" would end it early.
    throw new RenderError("invalid", `${field}.content`, 'unencoded content must not contain a line "EOF"');
  }
  return { path: file.path, data, permissions: file.permissions, transmitUnencoded: unencoded };
}

export function resolveUnit(unit: Unit, index: number): ResolvedUnit {
  const field = `spec.units[${index}]`;
  checkName(`${field}.name`, unit.name);
  const dropIns = (unit.dropIns ?? []).map((d, j) => {
    checkName(`${field}.dropIns[${j}].name`, d.name);
    return { name: d.name, content: d.content };
  });
  return { name: unit.name, content: unit.content, dropIns };
}

/** `chmod` argument: decimal OSC permissions as 4-digit zero-padded octal (420 → "0644"). */
export const octalMode = (permissions: number): string => permissions.toString(8).padStart(4, "0");
