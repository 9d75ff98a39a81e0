import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCsrPem, p1363ToDer, parseCsrPem } from "./csr.ts";
import { csrName } from "./csr-name.ts";
import { decodeEcPrivateKeyPem, encodeEcPrivateKeyPem, generateEcKey, publicKeyInfoDer } from "./ec-key.ts";

const subject = {
  commonName: "gardener.cloud:node-agent:machine:shoot--foo--bar-worker-abc12-xyz",
  organization: "gardener.cloud:node-agents",
};

const openssl = (args: string[], stdin?: string) => {
  const res = Bun.spawnSync(["openssl", ...args], stdin === undefined ? {} : { stdin: Buffer.from(stdin) });
  return { code: res.exitCode, out: res.stdout.toString() + res.stderr.toString() };
};

describe("CSR building blocks", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "gna-csr-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test("openssl verifies the CSR signature and reads subject CN/O without extensions", async () => {
    const key = await generateEcKey();
    const pem = await createCsrPem(key, subject);
    await writeFile(join(dir, "req.pem"), pem);
    const verify = openssl(["req", "-verify", "-noout", "-in", join(dir, "req.pem")]);
    expect(verify.code).toBe(0);
    expect(verify.out).toMatch(/verify OK/i);
    const text = openssl(["req", "-noout", "-subject", "-nameopt", "RFC2253", "-in", join(dir, "req.pem")]).out;
    expect(text.trim()).toBe("subject=CN=gardener.cloud:node-agent:machine:shoot--foo--bar-worker-abc12-xyz,O=gardener.cloud:node-agents");
    const dump = openssl(["req", "-noout", "-text", "-in", join(dir, "req.pem")]).out;
    expect(dump).toMatch(/Attributes:\s+\(none\)/);
    expect(dump).not.toContain("Subject Alternative Name");
  });

  test("writes an EC PRIVATE KEY that openssl accepts and that matches the CSR public key", async () => {
    const key = await generateEcKey();
    const keyPem = encodeEcPrivateKeyPem(key);
    expect(keyPem.startsWith("-----BEGIN EC PRIVATE KEY-----\n")).toBe(true);
    await writeFile(join(dir, "key.pem"), keyPem);
    expect(openssl(["ec", "-check", "-noout", "-in", join(dir, "key.pem")]).out).toContain("EC Key valid");
    const fromKey = openssl(["pkey", "-pubout", "-outform", "DER", "-in", join(dir, "key.pem")]);
    const spki = Bun.spawnSync(["openssl", "pkey", "-pubout", "-outform", "DER", "-in", join(dir, "key.pem")]).stdout;
    expect(fromKey.code).toBe(0);
    expect(Buffer.from(publicKeyInfoDer(key)).equals(Buffer.from(spki))).toBe(true);
    const parsed = parseCsrPem(await createCsrPem(key, subject));
    expect(Buffer.from(parsed.publicKeyInfoDer).equals(Buffer.from(spki))).toBe(true);
  });

  test("reads back its own key PEM so a restart signs with the same key", async () => {
    const key = await generateEcKey();
    const again = await decodeEcPrivateKeyPem(encodeEcPrivateKeyPem(key));
    expect(Buffer.from(again.publicPoint).equals(Buffer.from(key.publicPoint))).toBe(true);
    await writeFile(join(dir, "again.pem"), await createCsrPem(again, subject));
    expect(openssl(["req", "-verify", "-noout", "-in", join(dir, "again.pem")]).code).toBe(0);
  });

  test("converts P1363 signatures to DER integers with sign bytes and without leading zeros", () => {
    const sig = new Uint8Array(64);
    sig[0] = 0x80; // r needs a 0x00 sign byte
    sig[63] = 0x01; // s is 1 after stripping zeros
    expect(Buffer.from(p1363ToDer(sig)).toString("hex")).toBe(`302602210080${"00".repeat(31)}020101`);
  });

  test("names the CSR after the SHA-512/256 digest of key, subject and usages", async () => {
    const key = await generateEcKey();
    const usages = ["digital signature", "key encipherment", "client auth"];
    const enc = (b: Uint8Array | string) => `${Buffer.from(b).toString("base64url")}|`;
    const stream = enc(publicKeyInfoDer(key)) + enc(subject.commonName) + enc(subject.organization) + usages.map(enc).join("");
    const expected = `node-agent-csr-${createHash("sha512-256").update(stream).digest("base64url")}`;
    expect(csrName(publicKeyInfoDer(key), subject, usages)).toBe(expected);
    expect(expected).toMatch(/^node-agent-csr-[A-Za-z0-9_-]{43}$/);
  });
});
