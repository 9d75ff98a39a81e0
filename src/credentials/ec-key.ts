import { bitString, children, contextTag, DerError, objectIdentifier, octetString, readTlv, sequence, smallInteger } from "./der.ts";
import { decodePem, encodePem } from "./pem.ts";

const oidEcPublicKey = "1.2.840.10045.2.1";
const oidPrime256v1 = "1.2.840.10045.3.1.7";

/** A P-256 key: the WebCrypto signing key plus the raw parts needed for SEC1 and PKIX encodings. */
export interface EcKey {
  readonly privateKey: CryptoKey;
  /** Uncompressed point 0x04 || X || Y (65 bytes). */
  readonly publicPoint: Uint8Array;
  /** Private scalar, 32 bytes big-endian. */
  readonly d: Uint8Array;
}

const b64url = (b: Uint8Array): string => Buffer.from(b).toString("base64url");
const fromB64url = (s: string | undefined): Uint8Array => new Uint8Array(Buffer.from(s ?? "", "base64url"));

async function fromParts(d: Uint8Array, publicPoint: Uint8Array): Promise<EcKey> {
  if (d.length !== 32 || publicPoint.length !== 65 || publicPoint[0] !== 0x04) throw new DerError("not an uncompressed P-256 key");
  const jwk = {
    kty: "EC",
    crv: "P-256",
    d: b64url(d),
    x: b64url(publicPoint.subarray(1, 33)),
    y: b64url(publicPoint.subarray(33)),
    ext: true,
  };
  const privateKey = await crypto.subtle.importKey("jwk", jwk, { name: "ECDSA", namedCurve: "P-256" }, true, ["sign"]);
  return { privateKey, publicPoint, d };
}

/** A fresh ECDSA P-256 key (WebCrypto). */
export async function generateEcKey(): Promise<EcKey> {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey);
  const publicPoint = new Uint8Array(65);
  publicPoint[0] = 0x04;
  publicPoint.set(fromB64url(jwk.x), 1);
  publicPoint.set(fromB64url(jwk.y), 33);
  return { privateKey: pair.privateKey, publicPoint, d: fromB64url(jwk.d) };
}

/** SubjectPublicKeyInfo DER, byte-identical to Go's x509.MarshalPKIXPublicKey for P-256. */
export const publicKeyInfoDer = (key: Pick<EcKey, "publicPoint">): Uint8Array =>
  sequence(sequence(objectIdentifier(oidEcPublicKey), objectIdentifier(oidPrime256v1)), bitString(key.publicPoint));

/** SEC1 ECPrivateKey DER (RFC 5915), as Go's x509.MarshalECPrivateKey writes it. */
const sec1Der = (key: EcKey): Uint8Array =>
  sequence(smallInteger(1), octetString(key.d), contextTag(0, objectIdentifier(oidPrime256v1)), contextTag(1, bitString(key.publicPoint)));

/** PEM block `EC PRIVATE KEY`. */
export const encodeEcPrivateKeyPem = (key: EcKey): string => encodePem("EC PRIVATE KEY", sec1Der(key));

/** Parses an `EC PRIVATE KEY` PEM written by encodeEcPrivateKeyPem (P-256 with the public key present). */
export async function decodeEcPrivateKeyPem(pem: string): Promise<EcKey> {
  const top = readTlv(decodePem("EC PRIVATE KEY", pem));
  const [version, priv, ...tagged] = children(top.content);
  if (top.tag !== 0x30 || version?.tag !== 0x02 || priv?.tag !== 0x04) throw new DerError("not a SEC1 EC private key");
  const pub = tagged.find((t) => t.tag === 0xa1);
  if (pub === undefined) throw new DerError("SEC1 key without public key");
  const bits = readTlv(pub.content);
  const d = new Uint8Array(32);
  d.set(priv.content.subarray(Math.max(0, priv.content.length - 32)), 32 - Math.min(32, priv.content.length));
  return fromParts(d, bits.content.subarray(1));
}
