/** One line of an edit script: kept (" "), removed ("-") or added ("+"). */
type Op = { readonly kind: " " | "-" | "+"; readonly line: string };

const context = 3;
/** Above this many cells the middle part is shown as replaced whole (no quadratic work on huge files). */
const maxTableCells = 4_000_000;

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** Common prefix and suffix are kept; the middle is diffed by a longest-common-subsequence table. */
function editScript(a: readonly string[], b: readonly string[]): Op[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const am = a.slice(pre, a.length - suf);
  const bm = b.slice(pre, b.length - suf);
  const ops: Op[] = a.slice(0, pre).map((line) => ({ kind: " ", line }));
  if ((am.length + 1) * (bm.length + 1) > maxTableCells) {
    ops.push(...am.map((line) => ({ kind: "-" as const, line })), ...bm.map((line) => ({ kind: "+" as const, line })));
  } else {
    const w = bm.length + 1;
    const lcs = new Uint32Array((am.length + 1) * w);
    for (let i = am.length - 1; i >= 0; i--) {
      for (let j = bm.length - 1; j >= 0; j--) {
        lcs[i * w + j] =
          am[i] === bm[j] ? (lcs[(i + 1) * w + j + 1] ?? 0) + 1 : Math.max(lcs[(i + 1) * w + j] ?? 0, lcs[i * w + j + 1] ?? 0);
      }
    }
    let i = 0;
    let j = 0;
    while (i < am.length || j < bm.length) {
      if (i < am.length && j < bm.length && am[i] === bm[j]) {
        ops.push({ kind: " ", line: am[i++] ?? "" });
        j++;
      } else if (i < am.length && (j === bm.length || (lcs[(i + 1) * w + j] ?? 0) >= (lcs[i * w + j + 1] ?? 0))) {
        // Removals before additions, as diff(1) prints them.
        ops.push({ kind: "-", line: am[i++] ?? "" });
      } else {
        ops.push({ kind: "+", line: bm[j++] ?? "" });
      }
    }
  }
  ops.push(...a.slice(a.length - suf).map((line) => ({ kind: " " as const, line })));
  return ops;
}

const range = (start: number, count: number): string => (count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`);

/**
 * A unified diff (3 lines of context) of two texts, like `diff -u`; "" when they are equal.
 * A missing trailing newline is not marked (the size line of `diff` tells the byte counts).
 */
export function unifiedDiff(oldText: string, newText: string, oldName: string, newName: string): string {
  if (oldText === newText) return "";
  const ops = editScript(splitLines(oldText), splitLines(newText));
  const changed = ops.flatMap((op, i) => (op.kind === " " ? [] : [i]));
  if (changed.length === 0) return "";
  const out = [`--- ${oldName}`, `+++ ${newName}`];
  let k = 0;
  while (k < changed.length) {
    const first = changed[k] ?? 0;
    let last = first;
    while (k + 1 < changed.length && (changed[k + 1] ?? 0) - last <= 2 * context) last = changed[++k] ?? last;
    k++;
    const from = Math.max(0, first - context);
    const to = Math.min(ops.length, last + context + 1);
    let oldStart = 1;
    let newStart = 1;
    for (const op of ops.slice(0, from)) {
      if (op.kind !== "+") oldStart++;
      if (op.kind !== "-") newStart++;
    }
    const hunk = ops.slice(from, to);
    const oldCount = hunk.filter((o) => o.kind !== "+").length;
    const newCount = hunk.filter((o) => o.kind !== "-").length;
    out.push(`@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@`, ...hunk.map((o) => `${o.kind}${o.line}`));
  }
  return `${out.join("\n")}\n`;
}

/** Text a diff can show: valid UTF-8 without NUL bytes. */
export function asText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    // Not UTF-8: shown as "binary content differs", not as an error.
    return undefined;
  }
}
