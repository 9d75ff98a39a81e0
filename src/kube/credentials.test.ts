import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile, rename } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { authSourceFor, TokenFileSource } from "./credentials.ts";
import { TransportError } from "./errors.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "kube-cred-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("TokenFileSource", () => {
  test("should use a token rewritten in place by the very next request", async () => {
    const path = join(dir, "token");
    await writeFile(path, "token-one\n");
    const src = new TokenFileSource(path);
    expect(await src.header()).toBe("Bearer token-one");
    await writeFile(path, "token-two\n");
    expect(await src.header()).toBe("Bearer token-two");
  });

  test("should pick up a token file replaced by rename", async () => {
    const path = join(dir, "token");
    await writeFile(path, "aaaa");
    const src = new TokenFileSource(path);
    expect(await src.header()).toBe("Bearer aaaa");
    await writeFile(join(dir, "tmp"), "bbbb");
    await rename(join(dir, "tmp"), path);
    expect(await src.header()).toBe("Bearer bbbb");
  });

  test("should not re-read an unchanged file", async () => {
    let reads = 0;
    const src = new TokenFileSource(
      "/t",
      async () => (reads++, "tok"),
      async () => "same-stamp",
    );
    await src.header();
    await src.header();
    expect(reads).toBe(1);
  });

  test.each([
    ["missing", async () => {}],
    ["empty", async (p: string) => writeFile(p, " \n")],
  ])("should fail with a TransportError when the file is %s", async (_what, prepare) => {
    const path = join(dir, "token");
    await prepare(path);
    const err = await new TokenFileSource(path).header().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as Error).message).toStartWith(`cannot read token file ${path}`);
  });
});

describe("authSourceFor", () => {
  test.each([
    [{ kind: "none" } as const, undefined],
    [{ kind: "token", token: "t" } as const, "Bearer t"],
    [{ kind: "basic", username: "u", password: "p" } as const, "Basic dTpw"],
  ])("should produce the header for %j", async (creds, header) => {
    expect(await authSourceFor(creds).header()).toBe(header);
  });
});
