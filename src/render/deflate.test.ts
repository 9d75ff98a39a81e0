import { describe, expect, test } from "bun:test";
import { codeLengths, deflateRawOptimised, gzipSmallest } from "./deflate.ts";

/** Deterministic pseudo-random bytes (xorshift), so a failure reproduces. */
function noise(length: number, seed = 7): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

const text = (s: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(s);

/** A provision-like script: shell text around a base64 block, the shape the block split is for. */
function scriptWithCertificate(): Uint8Array<ArrayBuffer> {
  const pem = Buffer.from(noise(1050, 3)).toString("base64").replace(/.{64}/g, "$&\n");
  const shell = Array.from({ length: 40 }, (_, i) => `[ -n "$x${i}" ] || die "step ${i} of /var/lib/gardener-node-agent failed"\n`).join(
    "",
  );
  return text(
    `#!/bin/bash\nmkdir -p /var/lib/gardener-node-agent\ncat > /var/lib/gardener-node-agent/cluster-ca.crt << 'EOF'\n` +
      `-----BEGIN CERTIFICATE-----\n${pem}\n-----END CERTIFICATE-----\nEOF\n${shell}`,
  );
}

describe("deflateRawOptimised", () => {
  test.each([
    ["empty input", new Uint8Array(0)],
    ["one byte", text("x")],
    ["runs longer than a match", text("a".repeat(1000))],
    ["every byte value", Uint8Array.from({ length: 512 }, (_, i) => i & 0xff)],
    ["incompressible bytes", noise(5000)],
    [
      "repeats farther apart than the 32 KiB window",
      (() => {
        const block = noise(20000, 11);
        const out = new Uint8Array(60000);
        out.set(block, 0);
        out.set(block, 40000);
        return out;
      })(),
    ],
    ["a script with a certificate", scriptWithCertificate()],
  ] as [string, Uint8Array<ArrayBuffer>][])("should inflate back to the input for %s", (_, data) => {
    expect(Buffer.from(Bun.inflateSync(deflateRawOptimised(data))).equals(Buffer.from(data))).toBe(true);
  });
});

describe("gzipSmallest", () => {
  test("should give a gzip member without header flags that gunzips to the input", () => {
    const data = scriptWithCertificate();
    const gz = gzipSmallest(data);
    expect([...gz.subarray(0, 4)]).toEqual([0x1f, 0x8b, 8, 0]);
    expect(Buffer.from(Bun.gunzipSync(gz)).equals(Buffer.from(data))).toBe(true);
  });

  test("should beat libdeflate's level 12 on shell text around a base64 block, and never lose to it", () => {
    const data = scriptWithCertificate();
    const libdeflate = Bun.gzipSync(data, { level: 12, library: "libdeflate" }).length;
    expect(gzipSmallest(data).length).toBeLessThan(libdeflate);
    for (const other of [noise(3000), text("a".repeat(5000)), new Uint8Array(0)]) {
      expect(gzipSmallest(other).length).toBeLessThanOrEqual(Bun.gzipSync(other, { level: 12, library: "libdeflate" }).length);
      expect(Buffer.from(Bun.gunzipSync(gzipSmallest(other))).equals(Buffer.from(other))).toBe(true);
    }
  });
});

describe("codeLengths", () => {
  const kraft = (lengths: number[]): number => lengths.reduce((sum, l) => sum + (l > 0 ? 2 ** -l : 0), 0);

  test("should keep to the length limit with a complete code", () => {
    // Fibonacci frequencies make an unlimited Huffman code 19 bits deep.
    const fib = [1, 1];
    while (fib.length < 20) fib.push((fib.at(-1) ?? 0) + (fib.at(-2) ?? 0));
    const lengths = codeLengths(fib, 7);
    expect(Math.max(...lengths)).toBe(7);
    expect(kraft(lengths)).toBe(1);
  });

  test("should give a lone symbol a partner, so that the code is complete", () => {
    const lengths = codeLengths([0, 0, 5, 0], 15);
    expect(lengths[2]).toBe(1);
    expect(kraft(lengths)).toBe(1);
  });
});
