/**
 * YAML failures described without the document's text: a position and a fixed sentence per error
 * code (the `yaml` package's own messages quote the offending line, which may hold a credential), and
 * documents whose aliases form a cycle or nest too deeply, found before anything walks them recursively.
 * Shared by the config, kubeconfig and OSC readers.
 */

/** What the `yaml` package's errors carry besides their (content-quoting) message. */
export interface YamlErrorLike {
  readonly code: string;
  readonly linePos?: readonly { readonly line: number; readonly col: number }[] | undefined;
}

/** Deeper than any configuration or OSC needs, far below where recursive walkers overflow the stack. */
const maxYamlDepth = 200;

/** Parsers recurse per nesting level: a deep enough document overflows their stack (the package reports RESOURCE_EXHAUSTION). */
export const tooDeepToParse = `nesting too deep to parse (at most ${maxYamlDepth} levels are accepted)`;

const codeText: Readonly<Record<string, string>> = {
  ALIAS_PROPS: "an alias cannot have an anchor or a tag",
  BAD_ALIAS: "invalid alias",
  BAD_DIRECTIVE: "invalid directive",
  BAD_DQ_ESCAPE: "invalid escape sequence in a double-quoted string",
  BAD_INDENT: "bad indentation",
  BAD_PROP_ORDER: "anchor and tag in the wrong order",
  BAD_SCALAR_START: "a plain value cannot start with this character",
  BLOCK_AS_IMPLICIT_KEY: "a block collection cannot be an implicit key",
  BLOCK_IN_FLOW: "a block collection inside a flow collection",
  DUPLICATE_KEY: "duplicate key",
  IMPOSSIBLE: "unparsable document",
  KEY_OVER_1024_CHARS: "an implicit key longer than 1024 characters",
  MISSING_CHAR: "a closing quote or bracket is missing",
  MULTILINE_IMPLICIT_KEY: "an implicit key spans several lines",
  MULTIPLE_ANCHORS: "several anchors on one node",
  MULTIPLE_DOCS: "several documents in one source",
  MULTIPLE_TAGS: "several tags on one node",
  NON_STRING_KEY: "a key that is not a string",
  RESOURCE_EXHAUSTION: tooDeepToParse,
  TAB_AS_INDENT: "a tab used as indentation",
  TAG_RESOLVE_FAILED: "a value does not match its tag",
  UNEXPECTED_TOKEN: "unexpected token",
  BAD_COLLECTION_TYPE: "a collection of the wrong type",
};

/** `bad indentation at line 3, column 5` — never the offending text. */
export const yamlErrorText = (err: YamlErrorLike): string => {
  const what = codeText[err.code] ?? "invalid YAML";
  const pos = err.linePos?.[0];
  return pos === undefined ? what : `${what} at line ${pos.line}, column ${pos.col}`;
};

/** Nodes of the document with every alias expanded: a 10,000-file OSC has ~100,000; alias bombs have billions. */
const maxYamlNodes = 2_000_000;

/**
 * Why a parsed document cannot be walked safely (an alias that contains itself, nesting deeper than
 * `maxYamlDepth`, aliases that expand to more than `maxYamlNodes` nodes), or undefined. Iterative, so
 * it cannot overflow the stack itself.
 */
export const unsafeStructure = (doc: unknown): string | undefined => {
  if (typeof doc !== "object" || doc === null) return undefined;
  // The path from the root, one slot per level, and no object made per node visited: a big OSC has
  // ~100,000 nodes, and a frame and a copy of each node's values made 7 MB of garbage on top of the
  // parsed document, at the decode's peak (issue 27). `keys` is a plain object's own keys (JSC keeps
  // them per shape), undefined for an array (indexed) or a Map (its values, rare).
  const nodes: object[] = [];
  const lists: (readonly unknown[])[] = [];
  const named: boolean[] = [];
  const next: number[] = [];
  const onPath = new Set<object>();
  let visited = 0;
  const push = (node: object): string | undefined => {
    if (++visited > maxYamlNodes) return `more than ${maxYamlNodes} nodes once aliases are expanded`;
    if (onPath.has(node)) return "a recursive alias (a node that contains itself)";
    if (nodes.length >= maxYamlDepth) return `nesting deeper than ${maxYamlDepth} levels`;
    onPath.add(node);
    nodes.push(node);
    const plain = !Array.isArray(node) && !(node instanceof Map);
    lists.push(Array.isArray(node) ? node : node instanceof Map ? [...node.values()] : Object.keys(node));
    named.push(plain);
    next.push(0);
    return undefined;
  };
  const first = push(doc);
  if (first !== undefined) return first;
  for (let depth = 0; depth >= 0; depth = nodes.length - 1) {
    const list = lists[depth] as readonly unknown[];
    const i = next[depth] as number;
    if (i >= list.length) {
      onPath.delete(nodes.pop() as object);
      lists.pop();
      named.pop();
      next.pop();
      continue;
    }
    next[depth] = i + 1;
    const child = named[depth] ? (nodes[depth] as Record<string, unknown>)[list[i] as string] : list[i];
    if (typeof child === "object" && child !== null) {
      const problem = push(child);
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
};

/**
 * `unsafeStructure`'s answer for a document read without aliases (a tree: no node appears twice, none
 * contains itself), such as yaml-fast.ts's: the same nodes counted in the same order, by a recursion that
 * stops at `maxYamlDepth`, without the path's bookkeeping (a Set entry and a key list per node: ~2 ms of
 * a 1000-file OSC's decode).
 */
export const unsafeTree = (doc: unknown): string | undefined => {
  let visited = 0;
  const visit = (node: object, ancestors: number): string | undefined => {
    if (++visited > maxYamlNodes) return `more than ${maxYamlNodes} nodes once aliases are expanded`;
    if (ancestors >= maxYamlDepth) return `nesting deeper than ${maxYamlDepth} levels`;
    const children: Iterable<unknown> = Array.isArray(node) ? node : node instanceof Map ? node.values() : Object.values(node);
    for (const child of children) {
      if (typeof child !== "object" || child === null) continue;
      const problem = visit(child, ancestors + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  };
  return typeof doc === "object" && doc !== null ? visit(doc, 0) : undefined;
};
