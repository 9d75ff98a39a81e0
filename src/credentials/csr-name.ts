import type { CsrSubject } from "./csr.ts";

/**
 * `node-agent-csr-` + base64url(no padding) of SHA-512/256 over
 * enc(PKIX public key)|enc(CN)|enc(O)|enc(usage)|… (spec §7.3, same digest as the kubelet's CSR names).
 * Deterministic, so a restarted agent with the same key finds its pending CSR again.
 */
export function csrName(publicKeyInfo: Uint8Array, subject: CsrSubject, usages: readonly string[]): string {
  const hash = new Bun.CryptoHasher("sha512-256");
  const write = (data: Uint8Array | string) => {
    hash.update(Buffer.from(typeof data === "string" ? new TextEncoder().encode(data) : data).toString("base64url"));
    hash.update("|");
  };
  write(publicKeyInfo);
  write(subject.commonName);
  write(subject.organization);
  for (const u of usages) write(u);
  return `node-agent-csr-${Buffer.from(hash.digest()).toString("base64url")}`;
}
