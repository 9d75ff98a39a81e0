import { describe, expect, test } from "bun:test";
import {
  derToRawSignature,
  ImageSignatureError,
  importCosignPublicKey,
  rawToDerSignature,
  signPayload,
  simpleSigningPayload,
} from "./cosign.ts";

const ecdsa = { name: "ECDSA", namedCurve: "P-256" } as const;

describe("ECDSA signature encodings", () => {
  test("should round-trip r‖s through DER, including high-bit and short scalars", () => {
    const raw = new Uint8Array(64);
    raw[0] = 0x80; // r needs a sign byte in DER
    raw[40] = 0x01; // s has leading zeros stripped in DER
    raw[63] = 0x7f;
    const der = rawToDerSignature(raw);
    expect(der[0]).toBe(0x30);
    expect(der[3]).toBe(33); // r: sign byte + 32
    expect(derToRawSignature(der)).toEqual(raw);
  });

  test.each([
    ["an empty input", new Uint8Array()],
    ["a wrong outer tag", Uint8Array.of(0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01)],
    ["trailing bytes", Uint8Array.of(0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00)],
    ["a scalar longer than 32 bytes", Uint8Array.of(0x30, 0x26, 0x02, 0x21, 0x01, ...new Uint8Array(32), 0x02, 0x01, 0x01)],
  ])("should refuse %s", (_, der) => {
    expect(derToRawSignature(der)).toBeUndefined();
  });

  test("should produce signatures that verify with the exported public key", async () => {
    const pair = (await crypto.subtle.generateKey(ecdsa, true, ["sign", "verify"])) as CryptoKeyPair;
    const spki = new Uint8Array(await crypto.subtle.exportKey("spki", pair.publicKey));
    const pem = `-----BEGIN PUBLIC KEY-----\n${Buffer.from(spki).toString("base64")}\n-----END PUBLIC KEY-----\n`;
    const pub = await importCosignPublicKey(pem, "/k");
    const payload = simpleSigningPayload("r.example/agent", `sha256:${"ab".repeat(32)}`);
    const der = new Uint8Array(Buffer.from(await signPayload(pair.privateKey, payload), "base64"));
    const raw = derToRawSignature(der)!;
    expect(await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, pub, raw, payload)).toBe(true);
    payload[10] = (payload[10] ?? 0) ^ 1;
    expect(await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, pub, raw, payload)).toBe(false);
  });

  test("should name the key file when it holds no public key", async () => {
    await expect(importCosignPublicKey("garbage", "/var/lib/gardener-node-agent/cosign.pub")).rejects.toThrow(
      new ImageSignatureError('/var/lib/gardener-node-agent/cosign.pub: no PEM "PUBLIC KEY" block'),
    );
  });

  test("should write the simple-signing payload cosign writes", () => {
    const text = new TextDecoder().decode(simpleSigningPayload("r.example/agent", "sha256:00"));
    expect(JSON.parse(text)).toEqual({
      critical: {
        identity: { "docker-reference": "r.example/agent" },
        image: { "docker-manifest-digest": "sha256:00" },
        type: "cosign container image signature",
      },
      optional: null,
    });
  });
});
