/** ELF e_machine values for the architectures we ship. */
const MACHINE: Readonly<Record<string, number>> = { amd64: 62, x64: 62, arm64: 183, aarch64: 183 };

/**
 * Whether `bytes` start like a 64-bit little-endian ELF executable (or PIE) for `arch`
 * ("amd64"/"x64" or "arm64"/"aarch64"). Checked before the agent replaces its own binary.
 */
export function isExecutableFor(bytes: Uint8Array, arch: string): boolean {
  const machine = MACHINE[arch];
  if (machine === undefined || bytes.length < 64) return false;
  if (bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46) return false;
  if (bytes[4] !== 2 || bytes[5] !== 1) return false; // ELFCLASS64, little-endian
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const type = view.getUint16(16, true);
  return (type === 2 || type === 3) && view.getUint16(18, true) === machine;
}
