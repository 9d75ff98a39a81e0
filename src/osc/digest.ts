import type { Osc, OscFile } from "./schema.ts";

// A digested OSC keeps everything of an OSC but its files' inline data, which it replaces by a sha256 of
// encoding and data: what a planner needs of the last-applied OSC to tell changed files from unchanged
// ones, without holding a big OSC's contents (tens of megabytes) beside the new OSC's (issue 27).

/** The encoding that marks inline data as a digest: decodeInline rejects it, so it is never written out. */
export const digestEncoding = "sha256";

const inlineDigest = (encoding: string, data: string): string =>
  new Bun.CryptoHasher("sha256").update(encoding).update("\0").update(data).digest("hex");

/** Whether `f`'s inline data is a digest (from a digested OSC), not the content. */
export const isDigested = (f: OscFile): boolean => f.content.inline?.encoding === digestEncoding;

/** `f` with its inline data replaced by its digest (as is when it has none or is digested already). */
export function digestFile(f: OscFile): OscFile {
  const inline = f.content.inline;
  if (inline === undefined || inline.encoding === digestEncoding) return f;
  return { ...f, content: { ...f.content, inline: { encoding: digestEncoding, data: inlineDigest(inline.encoding, inline.data) } } };
}

/** `osc` with every file's inline data (spec and status) replaced by its digest. */
export function digestOsc(osc: Osc): Osc {
  const files = osc.spec.files?.map(digestFile);
  const extensionFiles = osc.status.extensionFiles?.map(digestFile);
  return { ...osc, spec: { ...osc.spec, files }, status: { ...osc.status, extensionFiles } };
}

/** Whether any file of `osc` carries a digest in place of its content. */
export const hasDigests = (osc: Osc): boolean =>
  (osc.spec.files ?? []).some(isDigested) || (osc.status.extensionFiles ?? []).some(isDigested);
