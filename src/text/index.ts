// Text helpers that know nothing of the agent: a unified diff of two texts, as `diff -u` prints it, and the
// size from which a text's garbage is collected at once.
export { bigTextChars } from "./big.ts";
export { asText, unifiedDiff } from "./unified-diff.ts";
