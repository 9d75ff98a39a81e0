import { ifFound, secrets, type Kube, type KubeObject, type ObjectKey } from "../../../kube/index.ts";
import { errorText } from "../../../log/index.ts";
import { decodeOsc, type Osc } from "../../../osc/index.ts";
import { secretValue } from "../plan/content.ts";

const oscDataKey = "osc.yaml";
export const checksumDataScriptAnnotation = "checksum/data-script";

/**
 * The Secret is unusable (no osc.yaml, undecodable): reported as a TerminalError, retried only when its
 * osc.yaml changes (the watch predicate enqueues it then).
 */
class OscSecretError extends Error {
  override readonly name = "OscSecretError";
}

/**
 * The Secret lacks `checksum/data-script`: retried with backoff, since adding the annotation alone does
 * not change osc.yaml and so would not wake the controller (spec §4 step 5).
 */
export class OscChecksumError extends Error {
  override readonly name = "OscChecksumError";
}

export interface SecretReadDeps {
  readonly kube: Kube;
  /** Cached read of the OSC Secret; defaults to a live GET through `kube`. */
  readonly readSecret?: ((key: ObjectKey, signal: AbortSignal) => Promise<KubeObject | undefined>) | undefined;
}

/** The OSC Secret by key (live GET unless the wiring reads it elsewhere); undefined when it does not exist. */
export async function readSecret(deps: SecretReadDeps, key: ObjectKey, signal: AbortSignal): Promise<KubeObject | undefined> {
  if (deps.readSecret !== undefined) return deps.readSecret(key, signal);
  return ifFound(deps.kube.get<KubeObject>(secrets, key.namespace, key.name, { signal }));
}

/** The Secret's `checksum/data-script` annotation, "" when it has none. */
export const secretChecksum = (secret: KubeObject): string => secret.metadata.annotations?.[checksumDataScriptAnnotation] ?? "";

/**
 * Each cached Secret object's decoded OSC: the reconcile after every apply (the Node's checksum changed)
 * reads the same object, and decoding a 20 MB osc.yaml again cost 3 × its size at once (issue 27). The
 * informer replaces the object on every change, so an entry lives as long as the Secret it came from.
 */
const decodedSecrets = new WeakMap<KubeObject, Osc>();

/** The OSC in the Secret's osc.yaml; throws OscSecretError naming the Secret when it is missing or undecodable. */
export function decodeSecret(secret: KubeObject, key: ObjectKey): Osc {
  const known = decodedSecrets.get(secret);
  if (known !== undefined) return known;
  // A big OSC: the watch event's text and the replaced Secret are collected before decoding adds its
  // copies, and those (bytes, the parser's garbage) right after, before the plan adds its own.
  const data = oscData(secret);
  const big = typeof data === "string" && data.length >= bigOsc;
  if (big) Bun.gc(true);
  const osc = decodeSecretData(secret, key);
  decodedSecrets.set(secret, osc);
  if (big) Bun.gc(true);
  return osc;
}

/** An osc.yaml this large (base64, as stored) is collected around its decoding. */
const bigOsc = 4 * 1024 * 1024;

/** `data["osc.yaml"]` as stored (base64 text), or undefined. */
export function oscData(secret: KubeObject): unknown {
  const data = secret["data"];
  return data !== null && typeof data === "object" ? (data as Record<string, unknown>)[oscDataKey] : undefined;
}

function decodeSecretData(secret: KubeObject, key: ObjectKey): Osc {
  let bytes: Uint8Array | undefined;
  try {
    bytes = secretValue(secret, oscDataKey);
  } catch (err) {
    throw new OscSecretError(`invalid ${oscDataKey} data in secret ${key.namespace}/${key.name}`, { cause: err });
  }
  if (bytes === undefined) throw new OscSecretError(`no ${oscDataKey} key found in secret ${key.namespace}/${key.name}`);
  try {
    return decodeOsc(bytes);
  } catch (err) {
    throw new OscSecretError(`failed decoding ${oscDataKey} of secret ${key.namespace}/${key.name}: ${errorText(err)}`, { cause: err });
  }
}
