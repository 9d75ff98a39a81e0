// From this many characters (or bytes) a text's dead copies are worth a full, synchronous collection
// (Bun.gc(true)) before the next big copy is made: one shared threshold for the watch line reader, the
// OSC Secret decode, the YAML parse and the file writes of an apply.
export const bigTextChars = 4 * 1024 * 1024;
