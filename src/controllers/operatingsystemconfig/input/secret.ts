import type { Clock } from "../../../clock/index.ts";
import { bigTextChars } from "../../../text/index.ts";
import { ifFound, secrets, type Kube, type KubeObject, type ObjectKey, type ObjectTransform } from "../../../kube/index.ts";
import { errorText } from "../../../log/index.ts";
import { decodeBase64Strict, decodeOsc, type Osc } from "../../../osc/index.ts";
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

/**
 * The cached Secret's decoded OSC was let go as a newer event for it streamed in (oscSecretTransform): the
 * reconcile reads the Secret again (readSecretAgain) instead of failing.
 */
export class OscSecretDropped extends Error {
  override readonly name = "OscSecretDropped";
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

/** A Secret's osc.yaml as decoded once: the OSC or why it cannot be, and a digest of its bytes. */
interface Decoded {
  /** sha256 of the osc.yaml bytes (of the stored text when it is not base64): what the watch predicate compares. */
  readonly digest: string;
  readonly result: { readonly ok: true; readonly osc: Osc } | { readonly ok: false; readonly err: OscSecretError };
}

/**
 * Each Secret object's decoded OSC. The informer's transform (oscSecretTransform) takes the osc.yaml bytes as
 * the object arrives and drops the base64 text; either way the OSC is parsed on its first use. The
 * informer replaces the object on every change, so an entry lives as long as the Secret it came from.
 */
const decodedSecrets = new WeakMap<KubeObject, Decoded | Undecoded | Dropped>();

/** An osc.yaml taken from the Secret by the transform, its bytes not parsed yet (decodeSecret does). */
interface Undecoded {
  readonly digest: string;
  /** Dropped once parsed (undefined), so that the collection right after the parse frees them. */
  bytes: Uint8Array | undefined;
  readonly key: ObjectKey;
}

/** What is left of a cached Secret's osc.yaml once a newer event for it started streaming in: its digest. */
interface Dropped {
  readonly digest: string;
  readonly dropped: true;
  /** Settles once that event is in the cache (the transform took the next object). */
  readonly arrival: Promise<void>;
}

/** How long a reconcile that finds the cached OSC dropped waits for the arriving event before a live GET. */
const arrivalWaitMs = 30_000;

const sha256 = (data: string | Uint8Array): string => new Bun.CryptoHasher("sha256").update(data).digest("hex");

/**
 * The informer transform of the OSC Secret (client-go's SetTransform, issue 27): `secretName`'s osc.yaml
 * is taken as bytes as the object arrives (parsed on first use, decodeSecret) and its base64 text (27 MB for a
 * 20 MB OSC) is not kept in the cache; the cached object keeps its metadata and every other data key. Other
 * Secrets pass unchanged (gardenadm's cache holds every pool's). Text that is not base64 keeps the error for
 * its reconcile to report.
 * A big osc.yaml arrives by watch as its bytes (dataAsBytes), decoded while the event streamed in: its
 * base64 text never existed whole in this process. As such an event starts (bigEventArriving), the cached
 * version's decoded OSC is let go, so that the old and the new version are never held at once.
 */
export function oscSecretTransform(secretName: string): ObjectTransform<KubeObject> {
  /** The last object of `secretName` taken: the cached version (not kept alive by this). */
  let latest: WeakRef<KubeObject> | undefined;
  /** The big event streaming in: the next object taken (whichever Secret) is that event's or a later one. */
  let arriving: PromiseWithResolvers<void> | undefined;
  const transform = (obj: KubeObject): KubeObject => {
    arriving?.resolve();
    arriving = undefined;
    if (obj.metadata.name !== secretName) return obj;
    latest = new WeakRef(obj);
    const key = { namespace: obj.metadata.namespace ?? "", name: obj.metadata.name };
    const bytes = takeOscData(obj, key);
    if (bytes === undefined) return obj;
    // The OSC is parsed on its first use, not here: a big one's parse blocks the event loop for 1-2 s (the
    // informer's first list arrives while the Lease is started, its first renewal would wait), and a small
    // one's (≈ 3 ms for the 50-file bench OSC) runs in the reconcile while the Node GET is in flight
    // (readNodeWhileDecoding) instead of before the reconcile starts (issue 25; 50-file apply on a fresh ext4,
    // same-window A/B, 8 rounds: 44.0 → 40.0 ms to the last restart, on /tmp 48.0 → 46.0).
    decodedSecrets.set(obj, bytes instanceof Uint8Array ? { digest: sha256(bytes), bytes, key } : bytes);
    return obj;
  };
  return Object.assign(transform, {
    dataAsBytes: (obj: KubeObject, dataKey: string) => obj.metadata.name === secretName && dataKey === oscDataKey,
    bigEventArriving: () => {
      arriving?.resolve(); // an earlier one whose stream broke: the informer watches or lists again
      arriving = Promise.withResolvers<void>();
      const cached = latest?.deref();
      if (cached !== undefined) dropDecoded(cached, arriving.promise);
    },
  });
}

/**
 * Lets go of a cached Secret's decoded OSC (or its unparsed bytes), keeping the digest the watch predicate
 * compares: a big event is streaming in, most likely the Secret's next version (in gardenadm mode maybe
 * another pool's). Collected right away, before the event's bytes pile up beside it: the old version's OSC
 * is old-generation garbage that the line reader's young collections would not free (issue 27: ≈ 23 MiB
 * of a 20 MiB OSC under the re-apply's peak). A reconcile that finds it dropped reads the Secret again.
 */
function dropDecoded(cached: KubeObject, arrival: Promise<void>): void {
  const known = decodedSecrets.get(cached);
  if (known === undefined || "dropped" in known) return;
  if ("bytes" in known) known.bytes = undefined;
  decodedSecrets.set(cached, { digest: known.digest, dropped: true, arrival });
  // Once this frame is gone: the collector scans the stack conservatively, and `known` here (or a register
  // still holding it) would keep the whole OSC alive through a collection made now. A microtask runs
  // before the line reader's next chunk is taken, even when that chunk is already buffered. The freed
  // pages go back to the system at once (Bun.shrink): the event's bytes are not taken from the heap.
  queueMicrotask(() => {
    Bun.gc(true);
    Bun.shrink();
  });
}

/**
 * The Secret again when the cached version's OSC was dropped (OscSecretDropped): the arriving event's
 * object from the cache once it is there (no second copy of a big Secret beside the event's); else (the
 * event was another Secret's, or it did not arrive within arrivalWaitMs) from the API server. The same
 * version gets its decoded OSC back in the cache, so that the next reconcile reads the cache again; a
 * newer one is returned as read (the informer brings it to the cache). Undefined: it was deleted.
 * `use` (the caller's decode) runs in the same turn as the check that the Secret still has its OSC: a
 * watch read resumed between an `await` and the caller's decode could start the next big event and drop
 * it again.
 */
export async function readSecretAgain<T>(
  deps: SecretReadDeps & { readonly clock: Clock },
  dropped: KubeObject,
  key: ObjectKey,
  signal: AbortSignal,
  use: (secret: KubeObject) => T,
): Promise<{ readonly secret: KubeObject; readonly used: T } | undefined> {
  const found = (secret: KubeObject) => ({ secret, used: use(secret) });
  const known = decodedSecrets.get(dropped);
  if (known === undefined || !("dropped" in known)) return found(dropped);
  if (deps.readSecret !== undefined) {
    await arrivedWithin(known.arrival, deps.clock, signal);
    const cached = await deps.readSecret(key, signal);
    if (cached === undefined) return undefined;
    const now = decodedSecrets.get(cached);
    if (cached !== dropped && (now === undefined || !("dropped" in now))) return found(cached);
  }
  const live = await ifFound(deps.kube.get<KubeObject>(secrets, key.namespace, key.name, { signal }));
  if (live === undefined) return undefined;
  if (live.metadata.resourceVersion !== dropped.metadata.resourceVersion) return found(live);
  let bytes: Uint8Array | undefined;
  try {
    bytes = secretValue(live, oscDataKey);
  } catch {
    return found(live); // decodeSecret reports it
  }
  if (bytes === undefined) return found(live);
  const data = bytes;
  decodedSecrets.set(
    dropped,
    collectedAround(bigBytes(data.length), () => decodeBytes(data, key, known.digest)),
  );
  return found(dropped);
}

/** Whether `n` bytes are a big osc.yaml: their base64 text reaches bigTextChars. */
const bigBytes = (n: number): boolean => Math.ceil(n / 3) * 4 >= bigTextChars;

/**
 * Removes osc.yaml from the object's data (the informer's own object, fresh from the API) and returns its
 * bytes, or the Decoded of text that is not base64; undefined when there is no osc.yaml.
 */
function takeOscData(obj: KubeObject, key: ObjectKey): Uint8Array | Decoded | undefined {
  const data = obj["data"];
  if (data === null || typeof data !== "object") return undefined;
  const record = data as Record<string, unknown>;
  const text = record[oscDataKey];
  if (text instanceof Uint8Array) {
    delete record[oscDataKey];
    return text;
  }
  if (typeof text !== "string") return undefined;
  delete record[oscDataKey];
  try {
    return decodeBase64Strict(text);
  } catch (err) {
    const invalid = new OscSecretError(`invalid ${oscDataKey} data in secret ${key.namespace}/${key.name}`, { cause: err });
    return { digest: sha256(text), result: { ok: false, err: invalid } };
  }
}

/** Waits for `arrival`, at most arrivalWaitMs; a reconcile cancelled meanwhile stops waiting. */
async function arrivedWithin(arrival: Promise<void>, clock: Clock, signal: AbortSignal): Promise<void> {
  const waited = new AbortController();
  const timeout = clock.sleep(arrivalWaitMs, AbortSignal.any([signal, waited.signal])).catch(() => {
    // Arrived first, or the reconcile was cancelled (its next request fails on the signal).
  });
  await Promise.race([arrival, timeout]);
  waited.abort();
}

function decodeBytes(bytes: Uint8Array, key: ObjectKey, digest = sha256(bytes)): Decoded {
  try {
    return { digest, result: { ok: true, osc: decodeOsc(bytes) } };
  } catch (err) {
    const failed = new OscSecretError(`failed decoding ${oscDataKey} of secret ${key.namespace}/${key.name}: ${errorText(err)}`, {
      cause: err,
    });
    return { digest, result: { ok: false, err: failed } };
  }
}

/** The OSC in the Secret's osc.yaml; throws OscSecretError naming the Secret when it is missing or undecodable. */
export function decodeSecret(secret: KubeObject, key: ObjectKey): Osc {
  let known = decodedSecrets.get(secret);
  if (known !== undefined && "dropped" in known) {
    throw new OscSecretDropped(`the cached ${oscDataKey} of secret ${key.namespace}/${key.name} was let go for a newer one`);
  }
  if (known !== undefined && !("result" in known)) {
    const undecoded = known;
    // A big one: the replaced Secret's OSC is collected before the parse makes its copies; the bytes right
    // after it, with the parser's garbage (else they stay until the plan's collection: 20 MB more under it).
    known = collectedAround(bigBytes(undecoded.bytes?.length ?? 0), () => {
      const decoded = decodeBytes(undecoded.bytes ?? new Uint8Array(0), undecoded.key, undecoded.digest);
      undecoded.bytes = undefined;
      decodedSecrets.set(secret, decoded);
      return decoded;
    });
  }
  if (known !== undefined) {
    if (known.result.ok) return known.result.osc;
    throw known.result.err;
  }
  // Read without the transform (a live GET): decoded now, remembered for the next reconcile. A big OSC:
  // the watch event's text and the replaced Secret are collected before decoding adds its copies, and
  // those (bytes, the parser's garbage) right after, before the plan adds its own.
  const data = oscData(secret);
  const big = typeof data === "string" && data.length >= bigTextChars;
  return collectedAround(big, () => {
    const osc = decodeSecretData(secret, key);
    decodedSecrets.set(secret, { digest: "", result: { ok: true, osc } });
    return osc;
  });
}

/**
 * Runs a big decode between two full collections (the garbage before it, then its own); a small one as is.
 * After a big one the heap's freed pages go back to the system (Bun.shrink): the plan and the file writes
 * that follow build on the decoded OSC, not on what the arrival and the parse left (same-minute A/B, 3 runs
 * each: re-apply peak 147.0-149.9 MiB against 153.0-154.9; after the whole apply it changed nothing).
 */
function collectedAround<T>(big: boolean, decode: () => T): T {
  if (big) Bun.gc(true);
  const result = decode();
  if (big) {
    Bun.gc(true);
    Bun.shrink();
  }
  return result;
}

/**
 * What the watch predicate compares for "osc.yaml changed": the digest of its bytes when the informer's
 * transform decoded it (the text is gone then), else the stored text.
 */
export function oscDataIdentity(secret: KubeObject): unknown {
  return decodedSecrets.get(secret)?.digest || oscData(secret);
}

/** `data["osc.yaml"]` as stored (base64 text), or undefined. */
function oscData(secret: KubeObject): unknown {
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
