// From this many characters (or bytes) a text's dead copies are worth a full, synchronous collection
// (Bun.gc(true)) before the next big copy is made: one shared threshold for the watch line reader, the
// OSC Secret decode, the YAML parse and the file writes of an apply.
export const bigTextChars = 4 * 1024 * 1024;

/**
 * From this many characters a string value of a JSON text is handled on its own: shared as a slice of a
 * whole text (big-json.ts), decoded as it streams in (json-line.ts); a watch line this long goes to the
 * streaming parser (kube/line-reader.ts), so it is never held whole before its value would be.
 */
export const longValueChars = 1024 * 1024;
