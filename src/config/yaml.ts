import { tooDeepToParse, unsafeStructure, yamlErrorText } from "./yaml-checks.ts";
import { yamlPackage } from "./yaml-package.ts";

/** The YAML text could not be parsed; the message names the problem and its line, never the text. */
export class YamlSyntaxError extends Error {
  override readonly name = "YamlSyntaxError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

export type YamlVersion = "1.1" | "1.2";

// Plain scalars YAML 1.1 resolves to booleans, numbers or timestamps where Bun's 1.2 core schema keeps a string.
const YAML11_STRING =
  /^(?:[yYnN]|[Yy]es|YES|[Nn]o|NO|[Oo]n|ON|[Oo]ff|OFF|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|[-+]?[0-9._]*_[0-9._]*(?:[eE][-+]?[0-9]+)?|[-+]?0b[0-1_]+|[-+]?0x[0-9a-fA-F_]+|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt\s].*)?)$/;
// Integer forms both schemas read as numbers but with different values (1.1 octal `0644`, 1.2 octal `0o17`).
const DIVERGENT_INT = /(?:^|[\s[{,:-])[-+]?0[0-9oO_]/m;
// Constructs the two parsers read differently in any version: several documents (`---`, `...`),
// directives, tags, explicit `?` keys, merge keys (Bun merges them in 1.2) and null keys.
const DIVERGENT_SYNTAX = /^(?:---|\.\.\.)(?:\s|$)|^%|!|^\s*\?(?:\s|$)|<<|(?:^|[\s{,])(?:null|Null|NULL|~)\s*:(?:\s|$)/m;
// An alias (`*name` where a node may start). Bun expands aliases without a limit (as shared objects that
// are cheap to build but billions of nodes to walk); the package caps them (maxAliasCount). A `*` inside
// a string may match too: that text only takes the slower, equally correct path.
const ALIAS = /(?:^|[\s[{,:-])\*[^\s[\]{},]/m;
/** Aliases one document may resolve (the `yaml` package's default, set here so it is not lost in an upgrade). */
const maxAliasCount = 100;

/** Walks a parsed document: whether any string matches `strings` and whether it holds a number. */
const scan = (node: unknown, strings: RegExp | undefined, seen: { number: boolean }): boolean => {
  if (typeof node === "string") return strings?.test(node) ?? false;
  if (typeof node === "number") {
    seen.number = true;
    return false;
  }
  if (Array.isArray(node)) return node.some((x) => scan(x, strings, seen));
  if (typeof node === "object" && node !== null) {
    for (const [k, v] of Object.entries(node)) if ((strings?.test(k) ?? false) || scan(v, strings, seen)) return true;
  }
  return false;
};

/** Whether Bun's reading of `text` may differ from the `yaml` package's reading in `version`. */
const mayDiffer = (text: string, doc: unknown, version: YamlVersion): boolean => {
  if (DIVERGENT_SYNTAX.test(text)) return true;
  if (version === "1.2") return false;
  const seen = { number: false };
  if (scan(doc, YAML11_STRING, seen)) return true;
  return seen.number && DIVERGENT_INT.test(text);
};

/**
 * One YAML document as the `yaml` package reads it in `version` (1.1: `yes` → true, `0644` → 420),
 * parsed by Bun's native parser when the text holds nothing the two read differently, since the
 * `yaml` package costs tens of milliseconds of start-up the first time it runs. Texts that may differ
 * (1.1-only scalars, octal-looking numbers, tags, several documents, …) and texts Bun rejects go to the `yaml`
 * package, so results and error messages are the package's. One difference remains: a duplicate key
 * in a document Bun accepts is read as "last one wins" (Go's yaml.v2 does the same) instead of failing.
 * Throws YamlSyntaxError.
 */
export const parseYaml = (text: string, version: YamlVersion): unknown => {
  if (ALIAS.test(text)) return parseSlow(text, version);
  let doc: unknown;
  try {
    doc = Bun.YAML.parse(text);
  } catch (err) {
    // Nesting deep enough to exhaust the parser's stack (the package's parser overflows too, slower).
    if (err instanceof RangeError) throw new YamlSyntaxError(tooDeepToParse);
    // Bun's messages carry no position; the package's do, and it may even accept the text.
    if (!(err instanceof SyntaxError)) throw err;
    return parseSlow(text, version);
  }
  // Bun resolves a recursive alias into a cyclic object; walking it recursively would overflow the stack.
  const unsafe = unsafeStructure(doc);
  if (unsafe !== undefined) throw new YamlSyntaxError(unsafe);
  return mayDiffer(text, doc, version) ? parseSlow(text, version) : doc;
};

const parseSlow = (text: string, version: YamlVersion): unknown => {
  const yaml = yamlPackage();
  let doc: unknown;
  try {
    // logLevel "error": the package would print warnings quoting keys to stderr, outside the logger.
    doc = yaml.parse(text, { version, logLevel: "error", maxAliasCount });
  } catch (err) {
    // Not kept as cause: the package's message quotes the offending line.
    if (err instanceof yaml.YAMLError) throw new YamlSyntaxError(yamlErrorText(err));
    // Alias bombs and unresolvable aliases surface as a plain ReferenceError.
    if (err instanceof ReferenceError) throw new YamlSyntaxError("an alias is unresolvable or expands too often");
    throw err;
  }
  const unsafe = unsafeStructure(doc);
  if (unsafe !== undefined) throw new YamlSyntaxError(unsafe);
  return doc;
};
