// Text helpers that know nothing of the agent: a unified diff of two texts, as `diff -u` prints it.
export { asText, unifiedDiff } from "./unified-diff.ts";
