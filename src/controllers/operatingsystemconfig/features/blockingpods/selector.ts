import { isQualifiedNamePart } from "../../../../kube/index.ts";

/** Node annotation: a disruptive apply waits while a running pod on this node matches this label selector. */
export const blockingPodsAnnotation = "node-agent.gardener.cloud/blocking-pods";

const prefixPart = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function keyProblem(key: string): string | undefined {
  const slash = key.indexOf("/");
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !prefixPart.test(prefix))) return "a key prefix is not a DNS subdomain";
  if (!isQualifiedNamePart(name)) return "a key is not a label name (63 characters, alphanumeric at both ends)";
  return undefined;
}

const valueProblem = (v: string): string | undefined =>
  v === "" || isQualifiedNamePart(v) ? undefined : "a value is not a label value (63 characters, alphanumeric at both ends)";

/** Splits at the commas outside parentheses (`a in (x,y),b` → two requirements). */
function requirements(s: string): string[] | undefined {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (depth < 0 || depth > 1) return undefined;
    if (ch === "," && depth === 0) {
      out.push(cur.trim());
      cur = "";
    } else cur += ch;
  }
  if (depth !== 0) return undefined;
  out.push(cur.trim());
  return out;
}

/**
 * What is wrong with a Kubernetes label selector (the grammar kube-apiserver accepts: `k`, `!k`,
 * `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`), undefined when it is valid. Names no value.
 */
export function labelSelectorProblem(selector: string): string | undefined {
  if (selector.trim() === "") return "the selector is empty";
  const reqs = requirements(selector);
  if (reqs === undefined) return "parentheses do not match";
  for (const [i, r] of reqs.entries()) {
    const where = `requirement ${i + 1}`;
    if (r === "") return `${where} is empty`;
    const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(r);
    if (set !== null) {
      const problem =
        keyProblem(set[1] as string) ??
        (set[3] as string)
          .split(",")
          .map((v) => valueProblem(v.trim()))
          .find((p) => p);
      if (problem !== undefined) return `${where}: ${problem}`;
      continue;
    }
    const cmp = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(r);
    if (cmp !== null) {
      const problem = keyProblem(cmp[1] as string) ?? valueProblem(cmp[3] as string);
      if (problem !== undefined) return `${where}: ${problem}`;
      continue;
    }
    const exists = /^(!?)\s*([^=!\s()]+)$/.exec(r);
    if (exists !== null) {
      const problem = keyProblem(exists[2] as string);
      if (problem !== undefined) return `${where}: ${problem}`;
      continue;
    }
    return `${where} is not of the form key, !key, key=value, key!=value, key in (…) or key notin (…)`;
  }
  return undefined;
}
