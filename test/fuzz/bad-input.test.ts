import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, decodeConfig, validateConfig } from "../../src/config/index.ts";
import { planChanges } from "../../src/controllers/operatingsystemconfig/plan/content.ts";
import { OscInputError } from "../../src/controllers/operatingsystemconfig/plan/input-error.ts";
import { computeChanges } from "../../src/controllers/operatingsystemconfig/plan/diff.ts";
import { checkApplyTargets } from "../../src/controllers/operatingsystemconfig/plan/targets.ts";
import { createHostFs, type HostFs } from "../../src/host/index.ts";
import { ApiError } from "../../src/kube/errors.ts";
import type { Kube } from "../../src/kube/types.ts";
import { decodeOsc, type Osc, OscDecodeError } from "../../src/osc/index.ts";
import { mulberry32, randomConfig, randomOsc, secretToken } from "./generators.ts";

/**
 * Seeded fuzzing of the input path: generated agent configs through decode → validate, and generated
 * OSC documents through decode → change computation → plan → target checks, against a root that only
 * allows reads. Invariants: only the typed input errors are thrown; no message (nor any cause's) holds
 * the secret-looking content planted in the document; no stack trace. Names and paths are identifiers
 * that errors do name, so secrets are planted only where content goes: file and unit contents,
 * values of the wrong type, lines that break the YAML.
 */

const seed = 0x5eed_0010;
const configCount = 5_000;
const oscCount = 6_000;
/** About 7 s of CPU in all; the limit leaves room for a machine shared with other test runs. */
const fuzzTimeoutMs = 60_000;

/** Every message in the error and its causes; fails the test on any error that is not an input error. */
function messages(err: unknown, allowed: readonly (abstract new (...a: never[]) => Error)[]): string {
  if (!allowed.some((cls) => err instanceof cls))
    throw new Error(`unexpected ${(err as Error)?.name ?? typeof err}: ${String((err as Error)?.message ?? err)}`);
  let text = "";
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 16; e = e.cause, depth++) text += `${e.message}\n`;
  return text;
}

function expectClean(text: string, s: string): void {
  expect(text).not.toContain(s);
  expect(text).not.toMatch(/\n\s+at /);
}

/** Secrets for `secretRef`: one with data, one whose data is not base64; anything else is missing. */
function fakeKube(s: string): Kube {
  return {
    async get(_res: unknown, _ns: string, name: string) {
      if (name === "present") return { metadata: { name }, data: { k: Buffer.from(s).toString("base64") } };
      if (name === "broken") return { metadata: { name }, data: { k: `${s}!` } };
      throw new ApiError(404, "NotFound", `secrets "${name}" not found`);
    },
  } as unknown as Kube;
}

/** The root's HostFs with every writing verb refused: the plan path must only read. */
function readOnly(host: HostFs): HostFs {
  const refuse = (verb: string) => () => {
    throw new Error(`host write during planning: ${verb}`);
  };
  return Object.create(
    host,
    Object.fromEntries(
      ["writeFileAtomic", "writeFilesAtomic", "remove", "removeAll", "ensureDir", "chmod", "symlink"].map((v) => [v, { value: refuse(v) }]),
    ),
  ) as HostFs;
}

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "gna-fuzz-"));
  mkdirSync(join(root, "etc/systemd/system"), { recursive: true });
  mkdirSync(join(root, "etc/dir-target"), { recursive: true });
  writeFileSync(join(root, "etc/file-parent"), "x");
  symlinkSync("../../../../../../outside", join(root, "etc/escape"));
  symlinkSync("../../../../../../outside", join(root, "etc/systemd/system/esc.service.d"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("bad input fuzzing", () => {
  test(
    `should only ever reject ${configCount} generated configs with a ConfigError that holds no content`,
    () => {
      const rnd = mulberry32(seed);
      const outcomes = { valid: 0, decode: 0, validate: 0 };
      for (let i = 0; i < configCount; i++) {
        const s = secretToken(rnd);
        const text = randomConfig(rnd, s);
        try {
          const config = decodeConfig(text, "/var/lib/gardener-node-agent/config.yaml");
          const issues = validateConfig(config);
          if (issues.length === 0) {
            outcomes.valid++;
            continue;
          }
          outcomes.validate++;
          expectClean(ConfigError.invalid("/c.yaml", issues).message + JSON.stringify(issues), s);
        } catch (err) {
          outcomes.decode++;
          expectClean(messages(err, [ConfigError]) + JSON.stringify((err as ConfigError).issues), s);
        }
      }
      // The generator must reach every stage, not only the YAML parser's refusals.
      expect(outcomes.valid).toBeGreaterThan(configCount / 20);
      expect(outcomes.validate).toBeGreaterThan(configCount / 20);
      expect(outcomes.decode).toBeGreaterThan(configCount / 5);
    },
    fuzzTimeoutMs,
  );

  test(
    `should only ever reject ${oscCount} generated OSC documents with an input error that holds no content, without writing`,
    async () => {
      const rnd = mulberry32(seed + 1);
      const host = readOnly(createHostFs(root));
      const signal = new AbortController().signal;
      const outcomes = { planned: 0, decode: 0, plan: 0 };
      let previous: Osc | undefined;
      for (let i = 0; i < oscCount; i++) {
        const s = secretToken(rnd);
        const text = randomOsc(rnd, s);
        let osc: Osc;
        try {
          osc = decodeOsc(text);
        } catch (err) {
          outcomes.decode++;
          expectClean(messages(err, [OscDecodeError]), s);
          continue;
        }
        try {
          const changes = computeChanges(previous, osc, `sum-${i}`, "host");
          await planChanges(fakeKube(s), changes, "amd64", signal);
          await checkApplyTargets(host, changes);
          outcomes.planned++;
          previous = osc;
        } catch (err) {
          outcomes.plan++;
          expectClean(messages(err, [OscInputError]), s);
        }
      }
      expect(outcomes.planned).toBeGreaterThan(oscCount / 10);
      expect(outcomes.plan).toBeGreaterThan(oscCount / 5);
      expect(outcomes.decode).toBeGreaterThan(oscCount / 10);
    },
    fuzzTimeoutMs,
  );
});
