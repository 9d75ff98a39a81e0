import { describe, expect, test } from "bun:test";
import { encodeOsc } from "./encode.ts";
import { decodeOsc } from "./decode.ts";
import { type BunYaml, fastYamlEligible, parseFilesInGroups, readYamlFast } from "./yaml-fast.ts";
import { readYamlCompat } from "./yaml-read.ts";
import { bigOscYaml } from "../../test/harness/big-osc.ts";
import { bigTextChars } from "../text/index.ts";

const fixtureDir = `${import.meta.dir}/../../test/fixtures/render`;
const fixtureNames = ["40-files", "42-units", "44-full"];
const fixtures = await Promise.all(fixtureNames.map((n) => Bun.file(`${fixtureDir}/${n}.osc.yaml`).text()));

/** The shape the apply benchmark and gardenlet produce: block mappings, decimal permissions, flow content. */
function benchOsc(files: number): string {
  const lines = ["apiVersion: extensions.gardener.cloud/v1alpha1", "kind: OperatingSystemConfig", "spec:", "  units:"];
  for (let u = 0; u < 3; u++) {
    lines.push(`  - name: bench-${u}.service`, `    content: "[Service]\\nExecStart=/bin/true\\n"`, "    enable: true", "    filePaths:");
    for (let f = u; f < files; f += 3) lines.push(`    - /etc/bench/${u}/file-${f}.conf`);
  }
  lines.push("  files:");
  for (let f = 0; f < files; f++) {
    lines.push(
      `  - path: /etc/bench/${f % 3}/file-${f}.conf`,
      "    permissions: 420",
      `    content: {inline: {data: "generation 1 file ${f}\\n"}}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

type Outcome = { ok: true; value: unknown } | { ok: false };
const compat = (text: string): Outcome => {
  try {
    return { ok: true, value: readYamlCompat(text) };
  } catch {
    return { ok: false };
  }
};

/** The fast path either declines, or yields exactly the reference reader's value (and never accepts what it rejects). */
function expectSameAsCompat(text: string): boolean {
  const fast = readYamlFast(text);
  if (fast === undefined) return false;
  const ref = compat(text);
  if (!ref.ok) throw new Error(`fast path accepted a text the reference rejects: ${JSON.stringify(text)}`);
  if (!Bun.deepEquals(fast, ref.value, true)) {
    throw new Error(`fast path differs for ${JSON.stringify(text)}: ${JSON.stringify(fast)} vs ${JSON.stringify(ref.value)}`);
  }
  return true;
}

describe("fastYamlEligible", () => {
  test.each([
    ["the benchmark's OSC shape", benchOsc(20)],
    ["a file fixture", fixtures[0] ?? ""],
    ["a unit fixture", fixtures[1] ?? ""],
    ["single-line JSON", '{"apiVersion": "v1", "spec": {"files": [{"path": "/a", "permissions": 420}]}}'],
    ["block scalars with shell content", "a: |\n  #!/bin/bash\n  if ! x; then echo *; fi &\n  k: !!binary x\nb: c\n"],
    ["a last-applied file as written", encodeOsc(decodeOsc(benchOsc(3)))],
    [
      "a checksum starting with a digit",
      "operatingSystemConfigChecksum: 865ccc6fe08da9f045e9474805d549cd9cdcac6e677b88f810be77d9951d5aec\n",
    ],
    ["a digit-led word with an exponent letter and another letter", "a: 1E9f\n"],
    ["a long base64 value", `data: ${"aGVsbG8gd29ybGQK".repeat(400)}\n`],
  ])("should accept %s", (_, text) => {
    expect(fastYamlEligible(text)).toBe(true);
  });

  test.each([
    ["octal permissions", "permissions: 0644\n"],
    ["a YAML 1.1 boolean", "enable: yes\n"],
    ["a YAML 1.1 boolean in another case", "enable: On\n"],
    ["True in title case", "enable: True\n"],
    ["an octal literal", "permissions: 0o644\n"],
    ["a number with underscores", "permissions: 4_20\n"],
    ["a float", "a: 1.5\n"],
    ["an anchor and an alias", "a: &x 1\nb: *x\n"],
    ["a merge key", "a: {k: 1}\nb:\n  <<: {j: 2}\n"],
    ["a tag", "a: !!binary aGVsbG8=\n"],
    ["several documents", "a: 1\n---\nb: 2\n"],
    ["a directive", "%YAML 1.1\n---\na: 1\n"],
    ["an explicit key", "? a\n: b\n"],
    ["a multi-line plain scalar", "a: b\n  c\n"],
    ["a multi-line quoted scalar", 'a: "b\n  c"\n'],
    ["a multi-line flow collection", "a: [b,\n  c]\n"],
    ["an indentation indicator", "a: |2\n    x\n"],
    ["a tab in the structure", "a:\tb\n"],
    ["CRLF line ends", "a: b\r\n"],
    ["a __proto__ key", "__proto__: {a: 1}\n"],
    ["a placeholder starting with <<", "data: <<BOOTSTRAP_TOKEN>>\n"],
    ["an escaped key", '"\\x61": 1\n'],
    ["a null key", "null: 1\n"],
    ["a numeric key", "1: a\n"],
    ["a digit-led word that is a float", "a: 1e5\n"],
    ["a hexadecimal literal", "a: 0x1f\n"],
    ["a YAML 1.1 binary literal", "a: 0b11\n"],
    ["a digit-led key", "9z: a\n"],
    ["a key longer than 1000 characters", `${"k".repeat(1001)}: a\n`],
  ])("should decline %s", (_, text) => {
    expect(fastYamlEligible(text)).toBe(false);
  });
});

describe("fastYamlEligible over a text's bytes", () => {
  test.each([
    ["a value ending in a no-break space", "a: b\u00a0\n", true],
    ["a YAML 1.1 word ending in a no-break space (trimmed, so still the word)", "enable: yes\u00a0\n", false],
    ["a key ending in an ideographic space", "k\u3000: v\n", true],
    ["a key of 600 two-byte characters (1,200 bytes)", `${"é".repeat(600)}: v\n`, false],
    ["a key of 600 two-byte characters after a letter", `k${"é".repeat(600)}: v\n`, true],
    ["a key of 1,001 two-byte characters after a letter", `k${"é".repeat(1000)}: v\n`, false],
    ["a NEL (a C1 control)", "a: b\u0085c\n", false],
    ["another C1 control", "a: b\u0091c\n", false],
    ["a Latin-1 letter (0xC2 0xA9 is no control)", "a: b\u00a9c\n", true],
    ["a line separator", "a: b\u2028c\n", false],
    ["a BOM inside", "a: b\ufeff\n", false],
    ["U+FFFD in a text (a lone surrogate encodes to it)", "a: b\ufffd\n", true],
    ["a hash without a space, then a comment on a later line", "a: x#y\nb: c #d\ne: f\n", true],
    ["colons without a space in a value, then keys on later lines", "a: x:y:z\nb: c\n", true],
    ["a comment right after a quoted value", "a: 'x'#y\n", false],
    ["a tab on a later structure line", "a: |\n  \tx\nb: c\n", true],
    ["a tab on a structure line after a block scalar", "a: |\n  x\nb:\tc\n", false],
  ])("should judge %s as its text", (_, text, eligible) => {
    expect(fastYamlEligible(text)).toBe(eligible);
    if (eligible) expect(expectSameAsCompat(text)).toBe(true);
  });

  test("should leave bytes holding U+FFFD to the slow path (their decoded text cannot tell it from invalid UTF-8)", () => {
    expect(readYamlFast(new TextEncoder().encode("a: b\ufffd\n"))).toBeUndefined();
    expect(readYamlFast(new TextEncoder().encode("a: b\u00a9\n"))).toEqual({ a: "b\u00a9" });
  });
});

describe("readYamlFast", () => {
  test("should read the fixtures exactly like the reference reader", () => {
    for (const text of [...fixtures, benchOsc(50), ...fixtures.map((f) => encodeOsc(decodeOsc(f)))]) {
      expect(compat(text).ok).toBe(true);
      expectSameAsCompat(text);
    }
  });

  test("should read digit-led words exactly like the reference reader", () => {
    for (const word of ["865ccc6fe08da9f045e9474805d549cd9cdcac6e677b88f810be77d9951d5aec", "12abc", "1E9f", "9z", "0a1"]) {
      expect(expectSameAsCompat(`k: ${word}\nl: [${word}, x]\n`)).toBe(true);
    }
  });

  test("should read UTF-8 bytes exactly like their text", () => {
    for (const text of [...fixtures, benchOsc(50), "a: é€😀\nb: [x, 'ü']\n"]) {
      expect(readYamlFast(new TextEncoder().encode(text))).toEqual(readYamlFast(text) as Record<string, unknown>);
    }
  });

  test("should scan megabytes of bytes as one text: block scalars whose lines would be ineligible outside one, a late anchor", () => {
    // Each block scalar spans 40 lines of ~100 bytes that would be ineligible outside a block scalar.
    const blocks = Array.from({ length: 600 }, (_, i) => `b${i}: |\n${`  &a *b !c ${"é".repeat(40)} line\n`.repeat(40)}`).join("");
    const text = `${blocks}tail: x\n`;
    expect(new TextEncoder().encode(text).length).toBeGreaterThan(2 * 1024 * 1024);
    expect(readYamlFast(new TextEncoder().encode(text))).toEqual(readYamlFast(text) as Record<string, unknown>);
    expect(readYamlFast(new TextEncoder().encode(text))).toBeDefined();
    expect(readYamlFast(new TextEncoder().encode(`${blocks}anchor: &a x\n`))).toBeUndefined();
  });

  describe("a big OSC's file list, parsed a group of items at a time", () => {
    const big = bigOscYaml(1200, 1); // ~5 MB: past bigTextChars
    const withFiles = (files: string, before = "", after = "") =>
      big.replace(/\n {2}files:\n[\s\S]*$/, `\n${before}  files:\n${files}${after}`);
    const items = big.slice(big.indexOf("\n  files:\n") + "\n  files:\n".length);
    // Counts the parses: the grouped path parses the rest of the document and then each group.
    const counting = () => {
      const parser = { calls: 0, parse: (input: string | Uint8Array) => (parser.calls++, Bun.YAML.parse(input)) };
      return parser as BunYaml & { calls: number };
    };
    test.each([
      { name: "gardenlet's layout", text: big },
      { name: "items indented under the key", text: withFiles(items.replace(/^ {2}/gm, "    ")) },
      { name: "a sibling key and a top-level key after the list", text: withFiles(items, "", "  purpose: reconcile\nstatus: {}\n") },
      {
        name: "blank lines and comments between items",
        text: withFiles(items.replace(/\n {2}- content:/g, "\n\n  # a file\n  - content:")),
      },
      { name: "an empty item value", text: withFiles(`  -\n    path: /x\n${items}`) },
      { name: "a comment at the left margin between items", text: withFiles(items.replace("\n  - content:", "\n# here\n  - content:")) },
    ])("should read $name exactly as one parse of the whole", ({ text }) => {
      const bytes = new TextEncoder().encode(text);
      expect(bytes.length).toBeGreaterThan(bigTextChars);
      const whole = Bun.YAML.parse(text) as Record<string, unknown>;
      expect(readYamlFast(bytes)).toEqual(whole);
      const parser = counting();
      expect(parseFilesInGroups(parser, bytes)).toEqual(whole);
      expect(parser.calls).toBeGreaterThan(3);
    });

    test("should not take a block scalar's `files:` line for the list", () => {
      const text = `note: |\n  files:\n  - not an item\n${big.replace("spec:\n", "spec:\n  files:\n  extra: 1\n").replace(/\n {2}files:\n(?= {2}- content)/, "\n  other:\n")}`;
      const bytes = new TextEncoder().encode(text);
      expect(readYamlFast(bytes)).toEqual(Bun.YAML.parse(text) as Record<string, unknown>);
      expect(parseFilesInGroups(counting(), bytes)).toBeUndefined();
    });
  });

  test.each([
    ["a byte order mark", new Uint8Array([0xef, 0xbb, 0xbf, 0x61, 0x3a, 0x20, 0x62])],
    ["invalid UTF-8", new Uint8Array([0x61, 0x3a, 0x20, 0xff])],
  ])("should leave bytes with %s to the slow path", (_, bytes) => {
    expect(readYamlFast(bytes)).toBeUndefined();
  });

  test("should read a long base64 value exactly like the reference reader", () => {
    expect(expectSameAsCompat(`content:\n  inline:\n    data: ${"aGVsbG8+d29y/GQK".repeat(5000)}==\n    encoding: b64\n`)).toBe(true);
  });

  test("should take the fast path for the benchmark's shape", () => {
    expect(readYamlFast(benchOsc(50))).toEqual(readYamlCompat(benchOsc(50)) as Record<string, unknown>);
  });

  test.each([
    "a: 1\na: 2\n",
    "a: ~\nb: null\nc:\nd: true\ne: false\n",
    "a: -5\nb: 0\nc: 123456789012345\n",
    "a: a#b\nb: c # d\nc: 'it''s'\n",
    'a: "\\x41\\u00e9\\N\\_\\L\\P\\e\\a\\v\\0\\/\\ \\t\\ud83d\\ude00\\U0001F600"\n',
    'a: "\\q"\n',
    "a: |\n  x\n   y\n\n",
    "a: |-\n  x\n\n",
    "a: |+\n  x\n\n\n",
    "a: >\n  x\n  y\n\n   z\n  w\n",
    "a: |\n   \n  x\n",
    "a: |\n    x\n  y\n",
    "a: |\n\tx\n",
    "- |\n  x\n- y\n",
    "- a: |\n    x\n  b: y\n",
    "- a: |\n   x\n  b: y\n",
    "a:\n  - 1\n  -  2\n",
    "a:\n- b: 1\n  c: 2\n",
    "k: [a, b, {c: d}]\n",
    '{"a":1,"b":[true,null,"x"]}',
    "a: {b}\n",
    "a: [b: c]\n",
    "a: ''\nb: \"\"\n",
    "key with space: v\n",
    "a: b: c\n",
    "a:\n  b: 1\n c: 2\n",
    "a:\n    b: 1\n  c: 2\n",
    "a: - b\n",
    "a: b\n  - c\n",
    '"a":b\n',
    "a: 'x'y\n",
    "a: [x]y\n",
    "a: [x]: y\n",
    "a: {b: c}}\n",
    "a:\n  b\n",
    "- - a\n  - b\n- c\n",
    "",
    "# only a comment\n",
    "a # b: c\n",
    "a: b #c: d\n",
    "a:  \n  b: c\n",
    "a:\n  - b\n   - c\n",
    "[a, b]\n",
    "a\n",
    "a: 'b' 'c'\n",
    "a: x,y\n",
    "a: [x, y,]\n",
    "a: {x: , y: z}\n",
    "a: $HOME/(x)\nb: _y\n",
  ])("should agree with the reference reader on %j", (text) => {
    expectSameAsCompat(text);
  });

  test("should agree with the reference reader on generated documents", () => {
    const rnd = mulberry32(0x05c);
    let fast = 0;
    for (let n = 0; n < 3000; n++) if (expectSameAsCompat(randomDoc(rnd))) fast++;
    // The corpus must exercise the fast path, not only its refusals.
    expect(fast).toBeGreaterThan(800);
  });
});

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const scalars = [
  "a",
  "b c",
  "420",
  "0644",
  "0",
  "-1",
  "1.5",
  "yes",
  "No",
  "on",
  "y",
  "true",
  "False",
  "null",
  "~",
  "",
  "0x1F",
  "1e3",
  ".inf",
  "/etc/x",
  "_x",
  "$x",
  "(x)",
  "x#y",
  "x #y",
  "x: y",
  "x:y",
  "'q'",
  '"q"',
  "'it''s'",
  '"a\\nb"',
  "&x",
  "*x",
  "!t",
  "<<",
  "- a",
  "[a]",
  "{a: b}",
  "[a, {b: c}]",
  "|",
  "|-",
  ">",
  "a,b",
  "%x",
  "@x",
  "`x",
  "?",
  ": x",
  "-",
  "\tx",
  "x\t",
  "1_0",
  "2001-01-01",
  "1:20",
];
/** Scalars the fast path accepts, so that generated documents also reach Bun's parser. */
const plainScalars = [
  "a",
  "b c",
  "420",
  "0",
  "-7",
  "true",
  "false",
  "null",
  "~",
  "/etc/x",
  "x#y",
  "'q'",
  '"a\\nb"',
  "[a, b]",
  "{a: b}",
  "x:y",
];
const keys = ["a", "permissions", "enable", "path", "b c", "'k'", '"k"', "1", "true", "null", "x-y", "__a"];

function randomDoc(rnd: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const tricky = rnd() < 0.5 ? 0.05 : 0.5;
  const scalar = (): string => pick(rnd() < tricky ? scalars : plainScalars);
  const lines: string[] = [];
  const emit = (indent: number, depth: number): void => {
    const count = 1 + Math.floor(rnd() * 3);
    for (let i = 0; i < count; i++) {
      const jitter = rnd() < 0.08 ? pick([-1, 1, 2]) : 0;
      const pad = " ".repeat(Math.max(0, indent + jitter));
      const kind = rnd();
      if (kind < 0.15 && depth < 3) {
        lines.push(`${pad}${pick(keys)}:`);
        emit(indent + 2, depth + 1);
      } else if (kind < 0.25 && depth < 3) {
        lines.push(`${pad}${pick(keys)}:`);
        for (let j = 0; j < 2; j++) lines.push(`${pad}${pick(["- ", "  - ", "-  "])}${scalar()}`);
      } else if (kind < 0.35) {
        lines.push(`${pad}${pick(keys)}: ${pick(["|", "|-", "|+", ">", "|2", "|  # c"])}`);
        const body = indent + pick([2, 2, 4, 1]);
        for (let j = 0; j < 3; j++) lines.push(rnd() < 0.2 ? "" : `${" ".repeat(body + (rnd() < 0.2 ? pick([-1, 1]) : 0))}${scalar()}`);
      } else if (kind < 0.4) {
        lines.push(`${pad}# ${scalar()}`);
      } else {
        lines.push(`${pad}${pick(keys)}: ${scalar()}${rnd() < 0.1 ? ` # ${scalar()}` : ""}`);
      }
    }
  };
  emit(0, 0);
  return `${lines.join("\n")}\n`;
}
