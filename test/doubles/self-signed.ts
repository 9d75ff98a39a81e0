import { readFileSync } from "node:fs";

/** What one self-signed P-256 certificate is made with. */
export interface SelfSignedOptions {
  readonly commonName: string;
  /** `subjectAltName` entries, e.g. `["IP:127.0.0.1"]`; none when empty. */
  readonly altNames?: readonly string[];
  /** Where the key goes; `/dev/null` when only the certificate is needed. */
  readonly keyPath: string;
  /** Where the certificate (PEM) goes. */
  readonly certPath: string;
  readonly days?: number;
}

/**
 * One self-signed EC P-256 certificate from openssl, as the test doubles and suites serve TLS with.
 * Returns the certificate PEM; throws with openssl's stderr.
 */
export function selfSignedCert(o: SelfSignedOptions): string {
  const args = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  args.push("-keyout", o.keyPath, "-out", o.certPath, "-days", String(o.days ?? 1), "-subj", `/CN=${o.commonName}`);
  if (o.altNames !== undefined && o.altNames.length > 0) args.push("-addext", `subjectAltName=${o.altNames.join(",")}`);
  const run = Bun.spawnSync(["openssl", ...args]);
  if (run.exitCode !== 0) throw new Error(`openssl req for ${o.commonName} failed: ${run.stderr.toString().trim()}`);
  return readFileSync(o.certPath, "utf8");
}
