import {
  bitString,
  children,
  contextTag,
  DerError,
  directoryString,
  objectIdentifier,
  readTlv,
  sequence,
  set,
  smallInteger,
  unsignedInteger,
} from "./der.ts";
import type { EcKey } from "./ec-key.ts";
import { publicKeyInfoDer } from "./ec-key.ts";
import { decodePem, encodePem } from "./pem.ts";

const oidCommonName = "2.5.4.3";
const oidOrganization = "2.5.4.10";
const oidEcdsaWithSha256 = "1.2.840.10045.4.3.2";

export interface CsrSubject {
  readonly commonName: string;
  readonly organization: string;
}

/** X.501 Name in Go's RDN order (O before CN), one attribute per RDN. */
const subjectDer = (s: CsrSubject): Uint8Array =>
  sequence(
    set(sequence(objectIdentifier(oidOrganization), directoryString(s.organization))),
    set(sequence(objectIdentifier(oidCommonName), directoryString(s.commonName))),
  );

/** WebCrypto ECDSA signatures are IEEE P1363 (r || s); X.509 wants DER SEQUENCE { r, s }. */
export function p1363ToDer(sig: Uint8Array): Uint8Array {
  const half = sig.length / 2;
  return sequence(unsignedInteger(sig.subarray(0, half)), unsignedInteger(sig.subarray(half)));
}

/** PKCS#10 CertificationRequest (no attributes, no SANs) signed with ecdsa-with-SHA256, as PEM. */
export async function createCsrPem(key: EcKey, subject: CsrSubject): Promise<string> {
  const info = sequence(smallInteger(0), subjectDer(subject), publicKeyInfoDer(key), contextTag(0));
  const sig = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key.privateKey, info));
  const der = sequence(info, sequence(objectIdentifier(oidEcdsaWithSha256)), bitString(p1363ToDer(sig)));
  return encodePem("CERTIFICATE REQUEST", der);
}

/** The parts of a CSR compared when an existing CertificateSigningRequest is reused. */
export interface ParsedCsr {
  readonly subjectDer: Uint8Array;
  readonly publicKeyInfoDer: Uint8Array;
}

/** Extracts subject and public key from a `CERTIFICATE REQUEST` PEM (signature not checked). */
export function parseCsrPem(pem: string): ParsedCsr {
  const top = readTlv(decodePem("CERTIFICATE REQUEST", pem));
  const [info] = children(top.content);
  if (top.tag !== 0x30 || info?.tag !== 0x30) throw new DerError("not a PKCS#10 request");
  const [version, subject, spki] = children(info.content);
  if (version?.tag !== 0x02 || subject?.tag !== 0x30 || spki?.tag !== 0x30) throw new DerError("malformed PKCS#10 request info");
  return { subjectDer: subject.raw, publicKeyInfoDer: spki.raw };
}
