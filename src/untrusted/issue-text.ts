import * as v from "valibot";

/** The JSON kind of a value (`string`, `number`, `array`, …) — what an error may say about input it rejects. */
export const kindOf = (x: unknown): string => (x === null ? "null" : Array.isArray(x) ? "array" : x instanceof Map ? "object" : typeof x);

const ruleText: Readonly<Record<string, (expected: string) => string>> = {
  min_value: (e) => `must be ${e}`,
  max_value: (e) => `must be ${e}`,
  integer: () => "must be an integer",
  safe_integer: () => "must be a safe integer",
  non_empty: () => "must not be empty",
  min_length: (e) => `length must be ${e}`,
  max_length: (e) => `length must be ${e}`,
};

/**
 * A valibot issue as text that names what was expected and the kind of value found, never the value:
 * `invalid type: expected string, got number`. valibot's own messages quote the input (an inline file
 * may hold a credential). Custom messages (`rawTransform`'s `addIssue`) are used as written: they are
 * this project's and never quote input.
 */
export const issueText = (issue: v.BaseIssue<unknown>): string => {
  if (issue.kind === "schema") {
    if (issue.input === undefined) return "required field missing";
    const expected = issue.expected === null ? "" : `expected ${issue.expected.toLowerCase()}, `;
    return `invalid type: ${expected}got ${kindOf(issue.input)}`;
  }
  if (issue.kind === "validation") {
    if (issue.type === "check") return issue.message; // this project's own sentence
    const rule = ruleText[issue.type];
    if (rule !== undefined) return `invalid value: ${rule(issue.expected ?? "")}`;
    return `invalid value (${issue.type.replaceAll("_", " ")})`;
  }
  return issue.message;
};

/**
 * Valibot issues as one message naming the dot-path of the first `max` problems and what each
 * expected, never their values: `layers[0].size: invalid type: expected number, got string`.
 */
export function issuesMessage(issues: readonly v.BaseIssue<unknown>[], max = 3): string {
  return issues
    .slice(0, max)
    .map((i) => {
      const p = v.getDotPath(i);
      return p === null ? issueText(i) : `${p}: ${issueText(i)}`;
    })
    .join("; ");
}
