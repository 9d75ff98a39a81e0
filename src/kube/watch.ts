import { ApiError, TransportError } from "./errors.ts";
import { type BigLine, readLines } from "./line-reader.ts";
import { resourcePath, type Resource } from "./resources.ts";
import { apiErrorFrom, parseBody, retryAfterHeader } from "./status.ts";
import type { DataAsBytes, KubeObject, WatchEvent, WatchOptions } from "./types.ts";
import { errorText } from "../log/index.ts";
import { JsonLineAssembler, LongBase64 } from "../text/index.ts";

/** What a watch needs from the client that opens it. */
export interface WatchTransport {
  readonly baseUrl: string;
  /** Request headers; waits for the client's rate limiter. */
  headers(signal: AbortSignal | undefined): Promise<Record<string, string>>;
  readonly fetch: (url: string, init: BunFetchRequestInit) => Promise<Response>;
  /** How long to wait for the response headers. */
  readonly headerTimeoutMs: number;
}

const eventTypes: ReadonlySet<string> = new Set(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);

/** The query of a watch request. */
export function watchQuery(opts: WatchOptions): URLSearchParams {
  const q = new URLSearchParams({ watch: "true" });
  if (opts.fieldSelector) q.set("fieldSelector", opts.fieldSelector);
  if (opts.labelSelector) q.set("labelSelector", opts.labelSelector);
  if (opts.resourceVersion !== undefined && opts.resourceVersion !== "") q.set("resourceVersion", opts.resourceVersion);
  if (opts.allowWatchBookmarks) q.set("allowWatchBookmarks", "true");
  if (opts.timeoutSeconds !== undefined) q.set("timeoutSeconds", String(Math.floor(opts.timeoutSeconds)));
  return q;
}

/** Decodes one line of a watch stream. An ERROR event is returned as the ApiError it carries. */
export function decodeWatchLine<T extends KubeObject>(line: string): WatchEvent<T> | Error {
  return decodeWatchValue<T>(parseBody(line), `${line.length} characters`);
}

/**
 * The envelope is checked by hand, not by a schema: this runs for every event of every watch, and a waiting
 * node of a big pool gets one per slot change (issue 25: a schema's copy of the envelope and the object's
 * top level was a tenth of the CPU an event costs the agent).
 */
function decodeWatchValue<T extends KubeObject>(value: unknown, size: string): WatchEvent<T> | Error {
  const type = isRecord(value) ? value["type"] : undefined;
  const object = isRecord(value) ? value["object"] : undefined;
  // Only the size: the line may be a Secret's event, and its text would carry the Secret's data.
  if (typeof type !== "string" || !eventTypes.has(type) || !isRecord(object))
    return new TransportError(`watch: undecodable event (${size})`);
  if (type === "ERROR") {
    const code = typeof object["code"] === "number" ? object["code"] : 500;
    return apiErrorFrom(code, object);
  }
  if (!isRecord(object["metadata"])) return new TransportError(`watch: ${type} event without object metadata`);
  // Envelope checked; the object's own fields are validated by whoever reads them.
  return { type: type as WatchEvent<T>["type"], object: object as unknown as T };
}

/**
 * A watch event too big to hold whole (readLines' BigLine): parsed as it streams in, its long base64 values
 * decoded on the way; `dataAsBytes` says which data values stay bytes, every other one is text again.
 */
export function bigWatchLine<T extends KubeObject>(dataAsBytes: DataAsBytes | undefined): BigLine<WatchEvent<T> | Error> {
  const assembler = new JsonLineAssembler();
  let size = 0;
  return {
    add: (bytes) => {
      size += bytes.length;
      assembler.add(bytes);
    },
    end: () => {
      let value: unknown;
      try {
        value = assembler.end();
      } catch {
        return new TransportError(`watch: undecodable event (${size} bytes)`);
      }
      if (dataAsBytes !== undefined) takeDataBytes(value, dataAsBytes);
      return decodeWatchValue<T>(asText(value), `${size} bytes`);
    },
  };
}

const isRecord = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object" && !Array.isArray(x);

/** The event object's data values that `dataAsBytes` wants as bytes become those bytes. */
function takeDataBytes(event: unknown, dataAsBytes: DataAsBytes): void {
  const object = isRecord(event) ? event["object"] : undefined;
  if (!isRecord(object) || !isRecord(object["metadata"]) || !isRecord(object["data"])) return;
  const data = object["data"];
  for (const [key, value] of Object.entries(data)) {
    if (value instanceof LongBase64 && dataAsBytes(object as unknown as KubeObject, key)) data[key] = value.bytes;
  }
}

/** `value` with every LongBase64 left in it replaced by its text (in place; the event's envelope is small). */
function asText(value: unknown): unknown {
  if (value instanceof LongBase64) return value.text();
  if (Array.isArray(value)) for (const [i, x] of value.entries()) value[i] = asText(x);
  else if (isRecord(value) && !(value instanceof Uint8Array)) for (const [k, x] of Object.entries(value)) value[k] = asText(x);
  return value;
}

/**
 * One watch request. Yields events until the server ends the stream (the iterator then ends) or
 * the caller's signal aborts (the iterator ends too). A non-2xx answer or an ERROR event throws an
 * ApiError (410 → isGone); a broken connection throws a TransportError.
 */
export async function* watchStream<T extends KubeObject>(
  res: Resource,
  namespace: string,
  opts: WatchOptions,
  t: WatchTransport,
): AsyncGenerator<WatchEvent<T>> {
  const caller = opts.signal;
  if (caller?.aborted) return;
  const url = `${t.baseUrl}${resourcePath(res, namespace)}?${watchQuery(opts)}`;
  let headers: Record<string, string>;
  try {
    headers = await t.headers(caller);
  } catch (err) {
    if (caller?.aborted) return; // aborted while waiting for the rate limiter
    throw err;
  }
  const headerDeadline = new AbortController();
  const timer = setTimeout(() => headerDeadline.abort(), t.headerTimeoutMs);
  const signal = caller !== undefined ? AbortSignal.any([caller, headerDeadline.signal]) : headerDeadline.signal;
  // Socket idle limit: a little beyond the server-side timeout, so a silently dead connection fails.
  const idle = opts.timeoutSeconds !== undefined ? (opts.timeoutSeconds + 30) * 1000 : true;
  let resp: Response;
  try {
    resp = await t.fetch(url, { method: "GET", headers, signal, timeout: idle });
  } catch (err) {
    if (caller?.aborted) return;
    const why = headerDeadline.signal.aborted ? `no response within ${t.headerTimeoutMs}ms` : errorText(err);
    throw new TransportError(`watch ${res.resource}: ${why}`, { cause: err });
  } finally {
    clearTimeout(timer);
  }
  if (resp.status < 200 || resp.status > 299) {
    const text = await resp.text().catch(() => "");
    throw apiErrorFrom(resp.status, parseBody(text), retryAfterHeader(resp.headers.get("retry-after")));
  }
  if (resp.body === null) return;
  // Each line is decoded by the reader (see readLines): its text is garbage before the event is handled.
  const lines = readLines(
    resp.body,
    (line) => decodeWatchLine<T>(line),
    () => {
      opts.onBigEvent?.();
      return bigWatchLine<T>(opts.dataAsBytes);
    },
  );
  const next = async (): Promise<WatchEvent<T> | undefined> => {
    const decoded = await lines.next();
    if (decoded.done === true) return undefined;
    if (decoded.value instanceof Error) throw decoded.value;
    return decoded.value;
  };
  try {
    for (let ev = await next(); ev !== undefined; ev = await next()) yield ev;
  } catch (err) {
    if (caller?.aborted) return;
    if (err instanceof ApiError || err instanceof TransportError) throw err;
    throw new TransportError(`watch ${res.resource}: stream broken: ${errorText(err)}`, { cause: err });
  } finally {
    // Also when the consumer stops early: ending the line reader closes the connection.
    await lines.return(undefined);
  }
}
