import { yamlErrorText, yamlPackage } from "../../../config/index.ts";
import type { HostFs } from "../../../host/index.ts";
import { decodeInline, type Osc } from "../../../osc/index.ts";
import { errorText } from "../../../log/index.ts";
import { unitNameProblem } from "../../../systemd/index.ts";
import { allFiles } from "./merge.ts";

/** Delivered as an OSC file or baked into the image (issue 26). */
export const disruptionPolicyPath = "/var/lib/gardener-node-agent/disruption-policy.yaml";

export const policyActions = ["none", "reload", "restart", "daemon-reload"] as const;
/** none: write only; reload: ReloadUnit instead of a restart; restart: upstream's behaviour; daemon-reload: only that. */
export type PolicyAction = (typeof policyActions)[number];

export interface PolicyRule {
  /** 1-based position in `rules:`. */
  readonly index: number;
  /** Line of the rule in the policy file (1-based). */
  readonly line: number;
  /** Exactly one of `files` (absolute path globs) and `units` (unit names) is set. */
  readonly files?: readonly string[];
  readonly units?: readonly string[];
  readonly action: PolicyAction;
}

export interface DisruptionPolicy {
  readonly rules: readonly PolicyRule[];
}

/** The policy that governs an apply; an invalid one is ignored as a whole (upstream's behaviour then). */
export type EffectivePolicy =
  | { readonly kind: "none" }
  | { readonly kind: "ok"; readonly policy: DisruptionPolicy; readonly source: PolicySource }
  | { readonly kind: "invalid"; readonly error: string; readonly source: PolicySource };
/** osc: the file as the OSC being applied delivers it; host: the file on disk (baked into the image). */
export type PolicySource = "osc" | "host";

/** The policy file is unusable; the message names the line and the field, never a value. */
export class DisruptionPolicyError extends Error {
  override readonly name = "DisruptionPolicyError";
}

/** The rule in one line of `diff`/`status` (names and globs are the operator's own, not secrets). */
export const ruleText = (r: PolicyRule): string =>
  `rule ${r.index} (line ${r.line}): ${r.files !== undefined ? `files [${r.files.join(", ")}]` : `units [${(r.units ?? []).join(", ")}]`} → ${r.action}`;

const globCache = new WeakMap<PolicyRule, readonly RegExp[]>();

/** Compiles a path glob: `*` and `?` stay inside one path segment, `**` spans segments, `[a-z]` / `[!a]` classes. */
export function compileGlob(glob: string): RegExp {
  if (!glob.startsWith("/")) throw new DisruptionPolicyError("is not an absolute path glob");
  let re = "^";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        // "/**/" also matches "/": a/**/b matches a/b.
        if (glob[i + 2] === "/") {
          re += "(?:.*/)?";
          i += 2;
        } else {
          re += ".*";
          i += 1;
        }
      } else re += "[^/]*";
    } else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      if (end < 0) throw new DisruptionPolicyError(`has an unclosed "["`);
      let body = glob.slice(i + 1, end);
      const negate = body.startsWith("!") || body.startsWith("^");
      if (negate) body = body.slice(1);
      if (body === "" || body.includes("/")) throw new DisruptionPolicyError(`has an empty or "/"-containing class`);
      re += `[${negate ? "^/" : ""}${body.replace(/[\\\]^]/g, (x) => `\\${x}`)}]`;
      i = end;
    } else if (c === "]") throw new DisruptionPolicyError(`has an unopened "]"`);
    else re += c.replace(/[.+^${}()|\\]/g, (x) => `\\${x}`);
  }
  try {
    return new RegExp(`${re}$`);
  } catch {
    throw new DisruptionPolicyError("has an invalid character class");
  }
}

/** A `files` rule matching `path` (a `units` rule never matches a file). */
export function ruleMatchesFile(rule: PolicyRule, path: string): boolean {
  if (rule.files === undefined) return false;
  let res = globCache.get(rule);
  if (res === undefined) {
    res = rule.files.map(compileGlob);
    globCache.set(rule, res);
  }
  return res.some((re) => re.test(path));
}

type YamlNode = import("yaml").Node;

/**
 * Parses the policy file. Every problem throws DisruptionPolicyError naming its line; nothing of a bad
 * file is used (the caller ignores the whole policy). An empty file is a policy without rules.
 */
export function parseDisruptionPolicy(text: string): DisruptionPolicy {
  const { LineCounter, parseDocument, isMap, isSeq, isScalar } = yamlPackage();
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, logLevel: "error" });
  const first = doc.errors[0];
  if (first !== undefined) throw new DisruptionPolicyError(yamlErrorText(first));
  const lineOf = (n: YamlNode | null | undefined): number => (n?.range ? lines.linePos(n.range[0]).line : 1);
  const fail = (n: YamlNode | null | undefined, what: string): never => {
    throw new DisruptionPolicyError(`line ${lineOf(n)}: ${what}`);
  };
  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) return { rules: [] };
  if (!isMap(root)) return fail(root, "the policy must be a mapping with the key rules");
  let rulesNode: YamlNode | null | undefined;
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? pair.key.value : undefined;
    if (key !== "rules") fail(pair.key as YamlNode, "unknown key (only rules is allowed)");
    rulesNode = pair.value as YamlNode | null;
  }
  if (rulesNode === undefined || rulesNode === null || (isScalar(rulesNode) && rulesNode.value === null)) return { rules: [] };
  if (!isSeq(rulesNode)) return fail(rulesNode, "rules must be a list");
  const rules: PolicyRule[] = [];
  for (const [i, item] of rulesNode.items.entries()) {
    const node = item as YamlNode;
    if (!isMap(node)) return fail(node, `rule ${i + 1} must be a mapping of files or units, and action`);
    const rule: { files?: string[]; units?: string[]; action?: PolicyAction } = {};
    for (const pair of node.items) {
      const keyNode = pair.key as YamlNode;
      const key = isScalar(keyNode) ? keyNode.value : undefined;
      const value = pair.value as YamlNode | null;
      if (key === "action") {
        const a = isScalar(value) ? value.value : undefined;
        if (typeof a !== "string" || !(policyActions as readonly string[]).includes(a))
          fail(value ?? keyNode, `action must be one of ${policyActions.join(", ")}`);
        rule.action = a as PolicyAction;
      } else if (key === "files" || key === "units") {
        if (!isSeq(value) || value.items.length === 0) return fail(value ?? keyNode, `${key} must be a non-empty list`);
        const names = value.items.map((x, j) => {
          const s = isScalar(x) ? x.value : undefined;
          if (typeof s !== "string" || s === "") return fail(x as YamlNode, `${key}[${j}] must be a non-empty string`);
          if (key === "units") {
            const problem = unitNameProblem(s);
            if (problem !== undefined) fail(x as YamlNode, `units[${j}] ${problem}`);
          } else {
            try {
              compileGlob(s);
            } catch (err) {
              fail(x as YamlNode, `files[${j}] ${errorText(err)}`);
            }
          }
          return s;
        });
        rule[key] = names;
      } else fail(keyNode, `unknown key in rule ${i + 1} (files, units, action)`);
    }
    if (rule.files !== undefined && rule.units !== undefined) fail(node, `rule ${i + 1} has both files and units (one per rule)`);
    if (rule.files === undefined && rule.units === undefined) fail(node, `rule ${i + 1} has neither files nor units`);
    if (rule.action === undefined) fail(node, `rule ${i + 1} has no action`);
    rules.push({ index: i + 1, line: lineOf(node), ...rule, action: rule.action as PolicyAction });
  }
  return { rules };
}

const parsed = (text: string, source: PolicySource): EffectivePolicy => {
  try {
    return { kind: "ok", policy: parseDisruptionPolicy(text), source };
  } catch (err) {
    const error = err instanceof DisruptionPolicyError ? err.message : `unreadable: ${errorText(err)}`;
    return { kind: "invalid", error: `${disruptionPolicyPath}: ${error}`, source };
  }
};

/**
 * The policy that governs applying `osc`: the file as `osc` delivers it (inline content only), none if the
 * last applied OSC delivered it and `osc` no longer does (the apply removes it), else the file on disk.
 */
export async function effectiveDisruptionPolicy(
  host: HostFs,
  osc: Osc,
  lastApplied: Osc | undefined,
  hostName: string,
): Promise<EffectivePolicy> {
  const delivered = policyFileOf(osc, hostName);
  if (delivered !== undefined) {
    const inline = delivered.content.inline;
    if (inline === undefined) return { kind: "invalid", error: `${disruptionPolicyPath}: only inline content is read`, source: "osc" };
    try {
      return parsed(new TextDecoder().decode(decodeInline(inline.encoding, inline.data)), "osc");
    } catch {
      return { kind: "invalid", error: `${disruptionPolicyPath}: inline content cannot be decoded`, source: "osc" };
    }
  }
  if (lastApplied !== undefined && policyFileOf(lastApplied, hostName) !== undefined) return { kind: "none" };
  return diskDisruptionPolicy(host);
}

/** The policy file among the files `osc` delivers to this host, if any. */
export const policyFileOf = (osc: Osc, hostName: string) => allFiles(osc, hostName).find((f) => f.path === disruptionPolicyPath);

/** The policy file on disk alone (what `status` shows: it governs the next apply unless that OSC brings another). */
export async function diskDisruptionPolicy(host: HostFs): Promise<EffectivePolicy> {
  const bytes = await host.readFile(disruptionPolicyPath);
  return bytes === undefined ? { kind: "none" } : parsed(new TextDecoder().decode(bytes), "host");
}

/** The rules an apply goes by: an invalid policy counts as none. */
export const activePolicy = (p: EffectivePolicy): DisruptionPolicy | undefined => (p.kind === "ok" ? p.policy : undefined);
