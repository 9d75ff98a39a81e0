import { describe, expect, test } from "bun:test";
import { decodeChanges, encodeChanges } from "./changes.ts";
import { decodeOsc } from "./decode.ts";
import { oscToPlain } from "./encode.ts";
import { streamYamlFast, writeYamlFast } from "./yaml-write-fast.ts";
import { toPlain, writeYamlCompat } from "./yaml-write.ts";

const fixtureDir = `${import.meta.dir}/../../test/fixtures/render`;
const fixtures = await Promise.all(["40-files", "42-units", "44-full"].map((n) => Bun.file(`${fixtureDir}/${n}.osc.yaml`).text()));

function benchOsc(files: number): string {
  const lines = ["spec:", "  units:"];
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

const changesText = `operatingSystemConfigChecksum: 3a1e5b
mustRestartNodeAgent: false
files:
  changed:
  - path: /etc/a
    permissions: 420
    content:
      inline:
        encoding: b64
        data: aGVsbG8=
  deleted:
  - path: /etc/b
    content:
      secretRef: {name: s, dataKey: k}
units:
  changed:
  - name: a.service
    enable: true
    content: "[Unit]\\nDescription=a\\n\\n[Service]\\nExecStart=/bin/a --flag=1\\n"
    dropIns:
    - name: 10-x.conf
      content: "[Service]\\nEnvironment=A=1"
    dropInsChanges:
      changed:
      - name: 10-x.conf
        content: "[Service]\\nEnvironment=A=1"
  commands:
  - name: a.service
    command: restart
containerd:
  configFileChanged: true
  registries:
    upstreamsToProbe: [docker.io]
`;

/**
 * The bytes streamYamlFast pushes out through a buffer of `chunkBytes`, undefined when it declines; its
 * check pass keeps up to `keepBytes` of them (0: none, written by a second pass).
 */
function streamed(value: unknown, chunkBytes: number, keepBytes?: number): string | undefined {
  const parts: Buffer[] = [];
  const out = streamYamlFast(value, chunkBytes, keepBytes);
  if (out === undefined) return undefined;
  out.writeTo((chunk) => parts.push(Buffer.from(chunk)));
  return Buffer.concat(parts).toString("utf8");
}

/** The fast writer either declines or produces the reference writer's exact bytes; its streamed form is the same. */
function expectSameAsCompat(value: unknown): boolean {
  const fast = writeYamlFast(value);
  // Chunks of 5 bytes split multi-byte characters' neighbours and every longer line.
  expect(streamed(value, 5)).toBe(fast);
  expect(streamed(value, 256 * 1024)).toBe(fast);
  // Written again by a second pass: nothing kept, or more than the check pass may keep (given up half-way).
  expect(streamed(value, 5, 0)).toBe(fast);
  expect(streamed(value, 256 * 1024, 64)).toBe(fast);
  if (fast === undefined) return false;
  expect(fast).toBe(writeYamlCompat(value));
  return true;
}

describe("writeYamlFast", () => {
  test("should keep a record's bytes in buffers sized by its previous length, growing when it got longer", () => {
    const plain = oscToPlain(decodeOsc(benchOsc(40)));
    const text = writeYamlFast(plain) as string;
    const length = Buffer.byteLength(text, "utf8");
    for (const before of [0, 1, length, length * 3]) {
      const size = { bytes: before };
      const out = streamYamlFast(plain, 256 * 1024, undefined, size);
      const parts: Uint8Array[] = [];
      out?.writeTo((chunk) => parts.push(chunk));
      expect(Buffer.concat(parts).toString("utf8")).toBe(text);
      expect(size.bytes).toBe(length);
      // Sized right (or bigger): one chunk; from nothing: a few, each twice the last one's size.
      if (before >= length) expect(parts.length).toBe(1);
      else expect(parts.length).toBeGreaterThan(1);
    }
  });

  test("should write decoded fixtures byte for byte like the yaml package", () => {
    for (const text of [...fixtures, benchOsc(40)]) expect(expectSameAsCompat(oscToPlain(decodeOsc(text)))).toBe(true);
  });

  test("should write a change set byte for byte like the yaml package", () => {
    const changes = decodeChanges(changesText);
    const plain = toPlain({ ...changes, units: { ...changes.units, changed: changes.units.changed.map((u) => ({ ...u })) } });
    expect(expectSameAsCompat(plain)).toBe(true);
    expect(encodeChanges(changes)).toBe(encodeChanges(decodeChanges(encodeChanges(changes))));
  });

  test.each([
    ["a key YAML 1.1 reads as a boolean", { n: 1 }],
    ["a key that needs quotes", { "a b": 1 }],
    ["an empty list", { a: [] }],
    ["a nested list", { a: [[1]] }],
    ["a float", { a: 1.5 }],
    ["a string with leading spaces on several lines", { a: "  x\ny" }],
    ["a string with trailing blank lines", { a: "x\n\n" }],
    ["a string with control characters", { a: "x\u0001\ny" }],
    ["bytes", { a: new Uint8Array([1]) }],
  ])("should leave %s to the yaml package", (_, value) => {
    expect(writeYamlFast(value)).toBeUndefined();
    expect(streamYamlFast(value)).toBeUndefined();
  });

  test.each([
    { a: "yes", b: "1234e56", c: "0644", d: "- x", e: "a: b", f: "x #y", g: "", h: "~", i: "it's", j: '"q"', k: "x ", l: "a:" },
    { a: "x\ny", b: "x\ny\n", c: "x \ny", d: "x\n\ny", e: "x\ty\nz", f: "#!/bin/bash\necho *\n", g: "x\n ", h: "x\ny  " },
    { a: [{}], b: {}, c: [{ d: [1, "x\ny"], e: {} }], f: null, g: false, h: -3 },
  ])("should agree with the yaml package on %j", (value) => {
    expectSameAsCompat(value);
  });

  test("should write digit-led words (checksums) like the yaml package", () => {
    const rnd = mulberry32(0x5eed);
    const alphabet = "0123456789abcdefeeeeEEEExobXOB";
    for (let n = 0; n < 3000; n++) {
      const len = 1 + Math.floor(rnd() * (n % 3 === 0 ? 64 : 6));
      let word = String(Math.floor(rnd() * 10));
      for (let i = 1; i < len; i++) word += alphabet[Math.floor(rnd() * alphabet.length)];
      expectSameAsCompat({ operatingSystemConfigChecksum: word });
    }
    expect(writeYamlFast({ k: "865ccc6fe08da9f045e9474805d549cd9cdcac6e677b88f810be77d9951d5aec" })).toBe(
      "k: 865ccc6fe08da9f045e9474805d549cd9cdcac6e677b88f810be77d9951d5aec\n",
    );
  });

  test("should write emoji (surrogate pairs) directly and lone surrogates like the yaml package", () => {
    const paired = { a: "hello 😀 world", b: "line one\nemoji 🎉 here\n", c: "x😀", d: "😀" };
    expect(expectSameAsCompat(paired)).toBe(true);
    for (const lone of ["\uD83D alone", "a\uDE00b", "line\n\uD83D\n"]) expectSameAsCompat({ k: lone });
  });

  test("should stream the same bytes through buffers of every size, strings shorter, longer and just longer than the room", () => {
    // Parts of 1-4 bytes per character and lengths around each buffer size: some fit, some flush first, some outgrow the buffer.
    const parts = ["é", "✓", "😀", "a"].flatMap((c) => [1, 5, 6, 7, 20, 63, 64, 65, 1000].map((n) => c.repeat(n)));
    const value = { files: parts.map((p, i) => ({ data: `x${p}`, text: `${p}\n${p}y\n`, index: i })) };
    const whole = writeYamlFast(value);
    expect(whole).toBe(writeYamlCompat(value));
    for (const size of [4, 5, 7, 16, 64, 65, 100, 4096]) expect(streamed(value, size)).toBe(whole);
  });

  test("should agree with the yaml package on generated values", () => {
    const rnd = mulberry32(0x0a1);
    let fast = 0;
    for (let n = 0; n < 2000; n++) if (expectSameAsCompat(randomMap(rnd, 0))) fast++;
    // The corpus must exercise the direct writer, not only its refusals.
    expect(fast).toBeGreaterThan(500);
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

const strings = [
  "a",
  "b c",
  "/etc/x",
  "_x",
  "$x",
  "(x)",
  "x#y",
  "x:y",
  "aGVsbG8=",
  "0644",
  "123",
  "1e5",
  "1234e56",
  "0x1f",
  "1:20",
  "2001-01-01",
  "9fe3",
  "0b11",
  "1E9f",
  "yes",
  "On",
  "null",
  "~",
  "",
  " x",
  "x ",
  "x:",
  "x: y",
  "x #y",
  "'q'",
  '"q"',
  "[a]",
  "{a}",
  "-",
  "- a",
  "?",
  "%x",
  "@x",
  "*x",
  "&x",
  "!x",
  "é",
  "a\u2028b",
  "x\ny",
  "x\ny\n",
  "x\ny\n\n",
  "\nx",
  " x\ny",
  "x\n y",
  "x\n\ty",
  "x\n  ",
  "x \ny",
  "#c\nd",
  "a\n\n\nb\n",
  "x\ty",
];
const keys = ["a", "b", "path", "permissions", "n", "y", "a b", "x.y", "x/y", "_k", "1", "K"];

function randomValue(rnd: () => number, depth: number): unknown {
  const r = rnd();
  if (depth < 3 && r < 0.2) return randomMap(rnd, depth + 1);
  if (depth < 3 && r < 0.3) return Array.from({ length: Math.floor(rnd() * 3) }, () => randomValue(rnd, depth + 1));
  if (r < 0.35) return Math.floor(rnd() * 1000) - 10;
  if (r < 0.4) return rnd() < 0.5;
  if (r < 0.42) return null;
  return strings[Math.floor(rnd() * strings.length)];
}

function randomMap(rnd: () => number, depth: number): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  const safe = rnd() < 0.6;
  for (let i = Math.floor(rnd() * 4); i >= 0; i--)
    m[(safe ? keys.slice(0, 4) : keys)[Math.floor(rnd() * (safe ? 4 : keys.length))] ?? "a"] = randomValue(rnd, depth);
  return m;
}
