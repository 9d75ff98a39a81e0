import type * as NodeCrypto from "node:crypto";
import { errorText } from "../../log/index.ts";

/** The validity window of the agent's client certificate, in ms since the epoch. */
export interface CertificateValidity {
  readonly notBeforeMs: number;
  readonly notAfterMs: number;
}

/** The REST config's client certificate/key is absent, unparsable or not a pair. */
export class ClientCertificateError extends Error {
  override readonly name = "ClientCertificateError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** Renewal starts at 80 % of the lifetime … */
const renewalFraction = 0.8;
/** … plus up to 10 % of that (wait.Jitter), i.e. between 80 % and 88 %. */
const renewalJitter = 0.1;

/**
 * The leaf certificate's validity, checked against its key like tls.X509KeyPair does (upstream
 * ClientCertificateFromRESTConfig). Only inline PEM counts: a REST config without certificate data
 * (token auth on the legacy kubeconfig path) has nothing to renew.
 */
export function clientCertificateValidity(certPem: string | undefined, keyPem: string | undefined): CertificateValidity {
  if (certPem === undefined || keyPem === undefined || certPem === "" || keyPem === "") {
    throw new ClientCertificateError("failed to parse X509 certificate: the REST config has no client certificate data");
  }
  // Required here, not imported at the top: the module is part of the start-up path, and node:crypto
  // (with Node's stream modules it pulls in) is needed only once the controller runs, after ready.
  const { createPrivateKey, X509Certificate } = require("node:crypto") as typeof NodeCrypto;
  let cert: NodeCrypto.X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (err) {
    throw new ClientCertificateError(`failed to parse X509 certificate: ${errorText(err)}`, { cause: err });
  }
  let matches: boolean;
  try {
    matches = cert.checkPrivateKey(createPrivateKey(keyPem));
  } catch (err) {
    throw new ClientCertificateError(`failed to parse X509 certificate: invalid private key`, { cause: err });
  }
  if (!matches) throw new ClientCertificateError("failed to parse X509 certificate: private key does not match public key");
  return { notBeforeMs: cert.validFromDate.getTime(), notAfterMs: cert.validToDate.getTime() };
}

/** wait.Jitter: d + random[0,1) × factor × d. */
const jitter = (d: number, factor: number, random: () => number): number => d + random() * factor * d;

/** NotBefore + jitter(0.8 × lifetime, 0.1): a point between 80 % and 88 % of the lifetime (whole ms). */
export function renewalDeadline(v: CertificateValidity, random: () => number): number {
  const total = v.notAfterMs - v.notBeforeMs;
  return v.notBeforeMs + Math.floor(jitter(total * renewalFraction, renewalJitter, random));
}
