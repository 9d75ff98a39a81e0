// Text helpers that know nothing of the agent: a unified diff of two texts, as `diff -u` prints it, a JSON
// parse that does not copy the long strings of a big text, one that takes a text chunk by chunk and decodes
// its long base64 values on the way, and the size from which a text's garbage is collected at once.
export { bigTextChars, longValueChars } from "./big.ts";
export { parseJsonSharingLongStrings } from "./big-json.ts";
export { JsonLineAssembler, LongBase64 } from "./json-line.ts";
export { asText, unifiedDiff } from "./unified-diff.ts";
