/** PEM armour: base64 body wrapped at 64 columns, as Go's encoding/pem writes it. */
export function encodePem(type: string, der: Uint8Array): string {
  const b64 = Buffer.from(der).toString("base64");
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${type}-----\n${lines.join("\n")}\n-----END ${type}-----\n`;
}

class PemError extends Error {
  override readonly name = "PemError";
}

/** The DER of the first PEM block of `type`; throws PemError when there is none. */
export function decodePem(type: string, pem: string): Uint8Array {
  const m = new RegExp(`-----BEGIN ${type}-----([\\s\\S]*?)-----END ${type}-----`).exec(pem);
  if (m === null || m[1] === undefined) throw new PemError(`no PEM block of type ${type}`);
  return new Uint8Array(Buffer.from(m[1].replace(/\s+/g, ""), "base64"));
}
