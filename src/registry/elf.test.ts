import { describe, expect, test } from "bun:test";
import { isExecutableFor } from "./elf.ts";

function elf(machine: number, cls = 2, type = 2): Uint8Array {
  const b = new Uint8Array(128);
  b.set([0x7f, 0x45, 0x4c, 0x46, cls, 1]);
  const v = new DataView(b.buffer);
  v.setUint16(16, type, true);
  v.setUint16(18, machine, true);
  return b;
}

describe("isExecutableFor", () => {
  test.each([
    [elf(62), "amd64", true],
    [elf(62), "x64", true],
    [elf(62, 2, 3), "amd64", true],
    [elf(183), "arm64", true],
    [elf(183), "amd64", false],
    [elf(62), "arm64", false],
    [elf(62, 1), "amd64", false],
    [elf(62, 2, 1), "amd64", false],
    [new TextEncoder().encode("#!/bin/sh\necho not an elf".padEnd(100)), "amd64", false],
    [new Uint8Array(10), "amd64", false],
  ])("should judge case %# (%s)", (bytes, arch, expected) => {
    expect(isExecutableFor(bytes, arch)).toBe(expected);
  });
});
