import * as v from "valibot";
import type { HostFs } from "../host/index.ts";
import { formatImageReference } from "./reference.ts";
import { RegistryHttpError } from "./transport.ts";
import { RegistryError } from "./errors.ts";
import type { ImageReference, Registry } from "./types.ts";

/**
 * cosign's key-based signatures, as `cosign sign --key` stores them: an OCI manifest tagged
 * `sha256-<hex>.sig` in the image's repository, whose layers are simple-signing payloads (JSON naming
 * the signed manifest digest), each with an ECDSA P-256 / SHA-256 signature (ASN.1 DER, base64) in the
 * layer annotation `dev.cosignproject.cosign/signature`.
 */
export const cosignSignatureAnnotation = "dev.cosignproject.cosign/signature";
export const simpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json";
const cosignSignatureType = "cosign container image signature";

const ecdsa = { name: "ECDSA", namedCurve: "P-256" } as const;
const ecdsaSha256 = { name: "ECDSA", hash: "SHA-256" } as const;
/** P-256 scalars are 32 bytes. */
const scalarBytes = 32;

/** The image is not signed by the configured key; the old binary stays. */
export class ImageSignatureError extends RegistryError {
  override readonly name: string = "ImageSignatureError";
}

/** The tag cosign stores an image digest's signatures under. */
export const cosignSignatureTag = (digest: string): string => `${digest.replace(":", "-")}.sig`;

const payloadSchema = v.object({
  critical: v.object({
    identity: v.optional(v.object({ "docker-reference": v.optional(v.string()) })),
    image: v.object({ "docker-manifest-digest": v.string() }),
    type: v.string(),
  }),
});

/** The simple-signing payload cosign signs for `digest` of `repository` ("registry/repo"). */
export function simpleSigningPayload(repository: string, digest: string): Uint8Array {
  const payload = {
    critical: { identity: { "docker-reference": repository }, image: { "docker-manifest-digest": digest }, type: cosignSignatureType },
    optional: null,
  };
  return new TextEncoder().encode(JSON.stringify(payload));
}

function pemBody(pem: string, label: string): Uint8Array | undefined {
  const m = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+)-----END ${label}-----`).exec(pem);
  return m?.[1] === undefined ? undefined : new Uint8Array(Buffer.from(m[1].replace(/\s+/g, ""), "base64"));
}

/** An ECDSA P-256 public key from PEM (SubjectPublicKeyInfo, as `cosign.pub` holds it). */
export async function importCosignPublicKey(pem: string, source: string): Promise<CryptoKey> {
  const der = pemBody(pem, "PUBLIC KEY");
  if (der === undefined) throw new ImageSignatureError(`${source}: no PEM "PUBLIC KEY" block`);
  try {
    return await crypto.subtle.importKey("spki", der, ecdsa, false, ["verify"]);
  } catch {
    throw new ImageSignatureError(`${source}: not an ECDSA P-256 public key`);
  }
}

/** An ECDSA P-256 private key from PEM (PKCS#8 "PRIVATE KEY", e.g. from `openssl genpkey`), for signing. */
export async function importSigningKey(pem: string, source: string): Promise<CryptoKey> {
  const der = pemBody(pem, "PRIVATE KEY");
  if (der === undefined) throw new ImageSignatureError(`${source}: no PEM "PRIVATE KEY" block (PKCS#8)`);
  try {
    return await crypto.subtle.importKey("pkcs8", der, ecdsa, false, ["sign"]);
  } catch {
    throw new ImageSignatureError(`${source}: not an ECDSA P-256 private key`);
  }
}

/** DER `SEQUENCE { INTEGER r, INTEGER s }` → r‖s (32 bytes each), the form Web Crypto verifies. */
export function derToRawSignature(der: Uint8Array): Uint8Array | undefined {
  let i = 0;
  const readLength = (): number | undefined => {
    const first = der[i++];
    if (first === undefined) return undefined;
    if (first < 0x80) return first;
    if (first !== 0x81) return undefined; // signatures are short: at most one length byte
    return der[i++];
  };
  if (der[i++] !== 0x30) return undefined;
  const total = readLength();
  if (total === undefined || i + total !== der.length) return undefined;
  const out = new Uint8Array(2 * scalarBytes);
  for (const slot of [0, 1]) {
    if (der[i++] !== 0x02) return undefined;
    const len = readLength();
    if (len === undefined || len === 0 || i + len > der.length) return undefined;
    let int = der.subarray(i, i + len);
    i += len;
    while (int.length > 0 && int[0] === 0) int = int.subarray(1);
    if (int.length > scalarBytes) return undefined;
    out.set(int, slot * scalarBytes + scalarBytes - int.length);
  }
  return i === der.length ? out : undefined;
}

/** r‖s → DER, the form cosign stores (and openssl verifies). */
export function rawToDerSignature(raw: Uint8Array): Uint8Array {
  const integer = (bytes: Uint8Array): number[] => {
    let b = Array.from(bytes);
    while (b.length > 1 && b[0] === 0) b = b.slice(1);
    if ((b[0] ?? 0) >= 0x80) b = [0, ...b];
    return [0x02, b.length, ...b];
  };
  const body = [...integer(raw.subarray(0, scalarBytes)), ...integer(raw.subarray(scalarBytes))];
  return Uint8Array.from([0x30, body.length, ...body]);
}

/** Signs a payload the way cosign does; returns the base64 DER signature for the annotation. */
export async function signPayload(key: CryptoKey, payload: Uint8Array): Promise<string> {
  const raw = new Uint8Array(await crypto.subtle.sign(ecdsaSha256, key, payload));
  return Buffer.from(rawToDerSignature(raw)).toString("base64");
}

export interface VerifiedImage {
  /** The signed manifest (or index) digest. */
  readonly digest: string;
  /** `registry/repo@sha256:…`: pull exactly what was verified (a tag may move meanwhile). */
  readonly pinned: string;
}

/**
 * Checks that `image` (tag or digest) is signed by `key`: resolves its top-level manifest digest,
 * fetches the `sha256-<hex>.sig` manifest, and accepts the first simple-signing layer whose payload
 * names that digest with the cosign type and whose signature verifies. Throws ImageSignatureError.
 */
async function verifyImageSignature(registry: Registry, image: string, key: CryptoKey, signal?: AbortSignal): Promise<VerifiedImage> {
  const top = await registry.fetchManifest(image, signal);
  const ref: ImageReference = { registry: top.reference.registry, repository: top.reference.repository };
  const pinned = formatImageReference({ ...ref, digest: top.digest });
  const sigImage = formatImageReference({ ...ref, tag: cosignSignatureTag(top.digest) });
  let sig;
  try {
    sig = await registry.fetchManifest(sigImage, signal);
  } catch (err) {
    if (err instanceof RegistryHttpError && err.status === 404)
      throw new ImageSignatureError(`image ${pinned} has no signature (no ${cosignSignatureTag(top.digest)} tag)`);
    throw err;
  }
  if (sig.manifest.kind !== "manifest") throw new ImageSignatureError(`signature ${sigImage} is an index, not a signature manifest`);
  const layers = sig.manifest.doc.layers.filter(
    (l) => l.mediaType === simpleSigningMediaType && l.annotations?.[cosignSignatureAnnotation] !== undefined,
  );
  for (const layer of layers) {
    const payload = await registry.fetchBlob(sig.reference, layer.digest, signal);
    if (!payloadNames(payload, top.digest)) continue;
    const der = new Uint8Array(Buffer.from(layer.annotations?.[cosignSignatureAnnotation] ?? "", "base64"));
    const raw = derToRawSignature(der);
    if (raw !== undefined && (await crypto.subtle.verify(ecdsaSha256, key, raw, payload))) return { digest: top.digest, pinned };
  }
  throw new ImageSignatureError(`image ${pinned}: none of ${layers.length} signature(s) verifies with the configured key`);
}

function payloadNames(payload: Uint8Array, digest: string): boolean {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(payload));
  } catch {
    return false;
  }
  const parsed = v.safeParse(payloadSchema, json);
  return (
    parsed.success &&
    parsed.output.critical.type === cosignSignatureType &&
    parsed.output.critical.image["docker-manifest-digest"] === digest
  );
}

/** Where an OSC (or provisioning) puts the public key the agent image must be signed with. */
const cosignPublicKeyPath = "/var/lib/gardener-node-agent/cosign.pub";

/**
 * The agent-image check the OSC controller runs before it replaces its own binary: without a key
 * file the image is taken as named; with one, the image must carry a valid signature and the
 * verified digest is what gets pulled. The key file is read on every call (it may arrive with an OSC).
 */
export function createAgentImageVerifier(
  registry: Registry,
  host: HostFs,
  keyPath = cosignPublicKeyPath,
): (image: string, signal?: AbortSignal) => Promise<string> {
  return async (image, signal) => {
    const pem = await host.readText(keyPath);
    if (pem === undefined) return image;
    const key = await importCosignPublicKey(pem, keyPath);
    return (await verifyImageSignature(registry, image, key, signal)).pinned;
  };
}
