import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

// The layering rules of design.md and style.md §4, checked on the source text so a violation fails
// `make test` instead of waiting for a review:
// 1. A controller folder src/controllers/<a>/ never imports from another one src/controllers/<b>/.
//    What several controllers share lives in src/controllers/shared/ or in a top-level file
//    src/controllers/*.ts (events.ts, queued-events.ts). shared/ itself imports no controller folder.
//    The wiring that builds every controller lives in src/cli/agent/, outside src/controllers/.
// 2. Code that ships (src/, except *.test.ts) never imports from test/. Unit tests beside the code
//    may use the doubles under test/: they are not part of the binary.
// 3. Nothing in src/ outside src/cli/ reads the environment (process.env, Bun.env, import.meta.env),
//    nor receives it: cli/env.ts parses it once into typed options, so no type below cli/ has the
//    shape of a raw environment record (`Record<string, string | undefined>`, `NodeJS.ProcessEnv`).

const repo = resolve(import.meta.dir, "..");
const srcDir = join(repo, "src");
const controllersDir = join(srcDir, "controllers");
const sharedFolders = new Set(["shared"]);

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** Comments removed (strings kept), so a path or `process.env` in a comment is not a finding. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

/** Every module specifier: static import/export … from, side-effect imports, dynamic import(). */
function specifiers(text: string): string[] {
  const code = withoutComments(text);
  const out: string[] = [];
  for (const re of [/\bfrom\s*["']([^"']+)["']/g, /\bimport\s*["']([^"']+)["']/g, /\bimport\(\s*["']([^"']+)["']\s*\)/g]) {
    for (const m of code.matchAll(re)) out.push(m[1]!);
  }
  return out;
}

/** The controller folder a path lies in (`undefined` for top-level src/controllers/*.ts and outside). */
function controllerFolder(path: string): string | undefined {
  const rel = relative(controllersDir, path);
  if (rel.startsWith("..")) return undefined;
  const parts = rel.split("/");
  return parts.length > 1 ? parts[0] : undefined;
}

interface Finding {
  readonly file: string;
  readonly detail: string;
}

const show = (f: Finding) => `${relative(repo, f.file)}: ${f.detail}`;

function crossControllerImports(): Finding[] {
  const findings: Finding[] = [];
  for (const file of tsFiles(controllersDir)) {
    const from = controllerFolder(file);
    if (from === undefined) continue;
    for (const spec of specifiers(readFileSync(file, "utf8"))) {
      if (!spec.startsWith(".")) continue;
      const to = controllerFolder(resolve(dirname(file), spec));
      if (to === undefined || to === from) continue;
      if (sharedFolders.has(to) && !sharedFolders.has(from)) continue;
      findings.push({ file, detail: `imports ${spec}` });
    }
  }
  return findings;
}

function importsFromTest(): Finding[] {
  const testDir = join(repo, "test");
  const findings: Finding[] = [];
  for (const file of tsFiles(srcDir)) {
    if (file.endsWith(".test.ts")) continue;
    for (const spec of specifiers(readFileSync(file, "utf8"))) {
      if (spec.startsWith(".") && !relative(testDir, resolve(dirname(file), spec)).startsWith("..")) {
        findings.push({ file, detail: `imports ${spec}` });
      }
    }
  }
  return findings;
}

function environmentReads(): Finding[] {
  const cliDir = join(srcDir, "cli");
  const findings: Finding[] = [];
  for (const file of tsFiles(srcDir)) {
    if (!relative(cliDir, file).startsWith("..")) continue;
    const lines = withoutComments(readFileSync(file, "utf8")).split("\n");
    lines.forEach((line, i) => {
      if (/\bprocess\.env\b|\bBun\.env\b|\bimport\.meta\.env\b|\bprocess\[["']env["']\]/.test(line)) {
        findings.push({ file, detail: `line ${i + 1} reads the environment` });
      }
    });
  }
  return findings;
}

/** A type that can only hold a raw environment: string → string | undefined, or Node's own. */
const rawEnvType = /\bRecord<\s*string\s*,\s*string\s*\|\s*undefined\s*>|\bNodeJS\.ProcessEnv\b|\btypeof\s+process\.env\b/;

function rawEnvironmentRecords(): Finding[] {
  const cliDir = join(srcDir, "cli");
  const findings: Finding[] = [];
  for (const file of tsFiles(srcDir)) {
    if (!relative(cliDir, file).startsWith("..") || file.endsWith(".test.ts")) continue;
    const lines = withoutComments(readFileSync(file, "utf8")).split("\n");
    lines.forEach((line, i) => {
      if (rawEnvType.test(line)) findings.push({ file, detail: `line ${i + 1} takes a raw environment record` });
    });
  }
  return findings;
}

describe("architecture", () => {
  describe("specifiers", () => {
    test("should find static, side-effect and dynamic imports and re-exports, but not commented ones", () => {
      const text = [
        'import { a } from "./a.ts";',
        'import type { B } from "../b/index.ts";',
        'export { c } from "./c.ts";',
        'import "./side-effect.ts";',
        'const d = await import("../d/dbus.ts");',
        '// import { e } from "../e/watch.ts";',
        '/* export { f } from "../f/index.ts"; */',
      ].join("\n");
      expect(specifiers(text)).toEqual(["./a.ts", "../b/index.ts", "./c.ts", "./side-effect.ts", "../d/dbus.ts"]);
    });
  });

  test("should have no controller folder importing another controller folder", () => {
    expect(crossControllerImports().map(show)).toEqual([]);
  });

  test("should have no shipped source under src/ importing from test/", () => {
    expect(importsFromTest().map(show)).toEqual([]);
  });

  test("should have nothing in src/ outside src/cli/ reading the environment", () => {
    expect(environmentReads().map(show)).toEqual([]);
  });

  describe("raw environment records", () => {
    test.each([
      ["readonly env: Readonly<Record<string, string | undefined>>;", true],
      ["function f(env: Record<string,string|undefined>) {}", true],
      ["const e: NodeJS.ProcessEnv = {};", true],
      ["type E = typeof process.env;", true],
      ["readonly labels: Record<string, string>;", false],
      ["readonly env: AgentEnv;", false],
    ])("should tell a raw environment type in %p: %p", (line, found) => {
      expect(rawEnvType.test(line)).toBe(found);
    });

    test("should have no type in src/ outside src/cli/ that takes a raw environment record", () => {
      expect(rawEnvironmentRecords().map(show)).toEqual([]);
    });
  });
});
