import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

// The layering rules of design.md and style.md §4 that an import graph tool cannot express, checked on
// the source text so a violation fails `make test` instead of waiting for a review. Those it can
// express run in `make lint` (dependency-cruiser, .dependency-cruiser.cjs): no import cycle in src/; a
// controller folder never imports another one (shared/ and src/controllers/*.ts are shared); shipped
// code never imports test/; the OSC room's features and stage order (osc-pipeline.md 3.4).
// 1. Nothing in src/ outside src/cli/ reads the environment (process.env, Bun.env, import.meta.env),
//    nor receives it: cli/env.ts parses it once into typed options, so no type below cli/ has the
//    shape of a raw environment record (`Record<string, string | undefined>`, `NodeJS.ProcessEnv`).
// 2. A folder with an index.ts shows its public face there: an import from outside that folder (from
//    anywhere in src/, unit tests included) names its index.ts, not a module inside it. For nested
//    folders the outermost folder the importer is not in decides. Three explicit exceptions:
//    - src/controllers/ is a group of controller folders, not a module: each controller folder (and
//      shared/) is a face, the top-level files (events.ts, queued-events.ts) are imported directly.
//    - `await import(...)` may name a module: a lazy import loads just what the command needs, and such
//      modules (systemd/dbus.ts, server/profiling.ts) stay out of the index.ts so importing the face
//      never loads them.
//    - The start-up path, the modules src/cli/main.ts reaches by static value imports, imports modules
//      directly: the bundle evaluates everything an index.ts re-exports, and argv is parsed before any
//      of it is needed (through the faces, 5 modules became 44 evaluated before the first line of
//      main). Type-only imports cost nothing at run time and still go through the faces. A further
//      test keeps index.ts files (other than one-file folders) off that path.
//    - The run command's own files in src/cli/ (run.ts and the cli/ modules it reaches by static value
//      imports) may name a module too: everything they evaluate runs before the node discovery request
//      is sent, and the OSC face alone (for the rollout timings in env.ts) evaluated the whole OSC
//      controller there (measured: request sent ~1.5 ms later, /readyz p50 ~1 ms later).

const repo = resolve(import.meta.dir, "..");
const srcDir = join(repo, "src");
const controllersDir = join(srcDir, "controllers");

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

/** Folders whose index.ts is a public face; src/controllers/ is not one (see rule 2). */
const faces = new Set(
  tsFiles(srcDir)
    .filter((f) => f.endsWith("/index.ts"))
    .map(dirname)
    .filter((d) => d !== controllersDir),
);

/** The outermost folder with a face that holds `target` but not `importer`, if any. */
function faceFor(importer: string, target: string): string | undefined {
  let face: string | undefined;
  for (let d = dirname(target); d.startsWith(`${srcDir}/`); d = dirname(d)) {
    if (faces.has(d) && !importer.startsWith(`${d}/`)) face = d;
  }
  return face;
}

/** Static import/export declarations, each with whether it is type-only (`import type`, `export type`). */
function staticImports(text: string): { spec: string; typeOnly: boolean }[] {
  const code = withoutComments(text);
  const out: { spec: string; typeOnly: boolean }[] = [];
  for (const m of code.matchAll(/^(?:import|export)(\s+type)?\b[^;"'`]*?\bfrom\s*["']([^"']+)["']|^import\s*["']([^"']+)["']/gm)) {
    out.push({ spec: (m[2] ?? m[3])!, typeOnly: m[1] !== undefined });
  }
  return out;
}

/** The start-up path: src/cli/main.ts and every module it reaches by static value imports. */
function startUpPath(root = join(srcDir, "cli", "main.ts")): Set<string> {
  const seen = new Set<string>();
  const pending = [root];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file) || !file.endsWith(".ts")) continue;
    seen.add(file);
    for (const { spec, typeOnly } of staticImports(readFileSync(file, "utf8"))) {
      if (spec.startsWith(".") && !typeOnly) pending.push(resolve(dirname(file), spec));
    }
  }
  return seen;
}

interface Finding {
  readonly file: string;
  readonly detail: string;
}

const show = (f: Finding) => `${relative(repo, f.file)}: ${f.detail}`;

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

/** The run command's files in src/cli/ evaluated before the discovery request (rule 2). */
function runCommandPath(): Set<string> {
  const cliDir = join(srcDir, "cli");
  return new Set([...startUpPath(join(cliDir, "run.ts"))].filter((f) => dirname(f) === cliDir));
}

function importsPastTheFace(): Finding[] {
  const startUp = startUpPath();
  for (const file of runCommandPath()) startUp.add(file);
  const findings: Finding[] = [];
  for (const file of tsFiles(srcDir)) {
    for (const { spec, typeOnly } of staticImports(readFileSync(file, "utf8"))) {
      if (!spec.startsWith(".") || (startUp.has(file) && !typeOnly)) continue;
      const target = resolve(dirname(file), spec);
      const face = faceFor(file, target);
      if (face !== undefined && target !== join(face, "index.ts")) {
        findings.push({ file, detail: `imports ${spec} instead of ${relative(dirname(file), join(face, "index.ts"))}` });
      }
    }
  }
  return findings;
}

/** index.ts files on the start-up path that load other TypeScript modules (one-file folders are fine). */
function facesOnStartUpPath(): Finding[] {
  const findings: Finding[] = [];
  for (const file of startUpPath()) {
    if (!file.endsWith("/index.ts")) continue;
    const reexported = new Set(
      staticImports(readFileSync(file, "utf8"))
        .filter((i) => !i.typeOnly && i.spec.startsWith(".") && i.spec.endsWith(".ts"))
        .map((i) => i.spec),
    );
    if (reexported.size > 0) findings.push({ file, detail: `is on the start-up path and loads ${[...reexported].join(", ")}` });
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
  describe("staticImports", () => {
    test("should tell type-only declarations from value ones and skip dynamic imports", () => {
      const text = [
        'import { a, type B } from "./a.ts";',
        'import type { C } from "../c/index.ts";',
        'export type { D } from "./d.ts";',
        'export { e } from "./e.ts";',
        'import "./side-effect.ts";',
        'const f = await import("../f/dbus.ts");',
      ].join("\n");
      expect(staticImports(text)).toEqual([
        { spec: "./a.ts", typeOnly: false },
        { spec: "../c/index.ts", typeOnly: true },
        { spec: "./d.ts", typeOnly: true },
        { spec: "./e.ts", typeOnly: false },
        { spec: "./side-effect.ts", typeOnly: false },
      ]);
    });
  });

  describe("faceFor", () => {
    test.each([
      ["src/cli/run.ts", "src/kube/client.ts", "src/kube"],
      ["src/kube/client.ts", "src/kube/errors.ts", undefined],
      ["src/cli/status.ts", "src/controllers/operatingsystemconfig/features/rollout/index.ts", "src/controllers/operatingsystemconfig"],
      [
        "src/controllers/operatingsystemconfig/apply/run.ts",
        "src/controllers/operatingsystemconfig/features/rollout/gate.ts",
        "src/controllers/operatingsystemconfig/features/rollout",
      ],
      ["src/cli/run.ts", "src/controllers/events.ts", undefined],
    ])("should find the face %s must use for %s", (importer, target, face) => {
      const found = faceFor(join(repo, importer), join(repo, target));
      expect(found === undefined ? undefined : relative(repo, found)).toBe(face);
    });
  });

  test("should have imports that cross into a folder name its index.ts", () => {
    expect(importsPastTheFace().map(show)).toEqual([]);
  });

  test("should keep index.ts files that load other modules off the start-up path", () => {
    expect(facesOnStartUpPath().map(show)).toEqual([]);
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
