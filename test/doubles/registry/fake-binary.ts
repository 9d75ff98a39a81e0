/** A small stand-in for the agent binary: a valid 64-bit ELF header for `arch`, then seeded bytes. */
export function fakeElf(arch: "amd64" | "arm64", size = 256 * 1024, seed = 1): Uint8Array {
  const bytes = new Uint8Array(size);
  let x = Math.imul(seed, 2654435761) >>> 0;
  for (let i = 0; i < size; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    bytes[i] = x >>> 24;
  }
  bytes.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0], 0);
  const view = new DataView(bytes.buffer);
  view.setUint16(16, 2, true); // ET_EXEC
  view.setUint16(18, arch === "amd64" ? 62 : 183, true);
  return bytes;
}
