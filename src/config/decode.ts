import * as v from "valibot";
import { configApiVersion, configKind, nodeAgentConfigurationSchema } from "./configuration.ts";
import type { NodeAgentConfiguration } from "./configuration.ts";
import { ConfigError } from "./errors.ts";
import type { FieldIssue } from "./errors.ts";
import { issueText } from "../untrusted/index.ts";
import { parseYaml, YamlSyntaxError } from "./yaml.ts";

/** Gates of the process-wide feature gate; the agent registers none of its own. */
const knownFeatureGates: readonly string[] = ["AllAlpha", "AllBeta"];

/** `controllers.token.syncConfigs[1].path` from a valibot issue path. */
const issuePath = (issue: v.BaseIssue<unknown>): string => {
  let out = "";
  for (const item of issue.path ?? []) {
    const key = (item as { key: unknown }).key;
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
};

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/**
 * Decodes YAML (1.1 semantics, as the Go agent's decoder) or JSON into a defaulted configuration.
 * A missing apiVersion/kind is accepted; any other type is a decode error. Unknown fields are ignored.
 * Throws ConfigError (stage "decode"); `file` only names the source in messages.
 */
export const decodeConfig = (text: string, file?: string): NodeAgentConfiguration => {
  let doc: unknown;
  try {
    doc = parseYaml(text, "1.1");
  } catch (err) {
    if (!(err instanceof YamlSyntaxError)) throw err;
    throw new ConfigError("decode", file, [], `invalid YAML: ${err.message}`, { cause: err });
  }
  if (doc === null || doc === undefined) doc = {};
  if (!isRecord(doc)) throw new ConfigError("decode", file, [], "the document is not a mapping");

  const apiVersion = doc["apiVersion"];
  const kind = doc["kind"];
  // The found values are not repeated: like any field, they may hold anything.
  if (apiVersion !== undefined && apiVersion !== configApiVersion) {
    throw new ConfigError("decode", file, [], `apiVersion: unexpected value, expected "${configApiVersion}"`);
  }
  if (kind !== undefined && kind !== configKind) {
    throw new ConfigError("decode", file, [], `kind: unexpected value, expected "${configKind}"`);
  }

  const result = v.safeParse(nodeAgentConfigurationSchema, doc);
  if (!result.success) {
    // Neither the detail nor the issue carries the value: it may be anything, a credential included.
    const issues: FieldIssue[] = result.issues.map((i) => ({ path: issuePath(i), type: "Invalid", detail: issueText(i) }));
    const reason = issues.map((i) => (i.path === "" ? i.detail : `${i.path}: ${i.detail}`)).join(", ");
    throw new ConfigError("decode", file, issues, reason);
  }

  const unknownGates = Object.keys(result.output.featureGates ?? {}).filter((g) => !knownFeatureGates.includes(g));
  if (unknownGates.length > 0) {
    const issues: FieldIssue[] = unknownGates.map((g) => ({
      path: `featureGates.${g}`,
      type: "NotSupported",
      detail: "unrecognized feature gate",
    }));
    throw new ConfigError("decode", file, issues, unknownGates.map((g) => `unrecognized feature gate: ${g}`).join(", "));
  }
  return result.output;
};
