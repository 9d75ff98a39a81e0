import * as v from "valibot";
import { ApiError } from "./errors.ts";
import { bigTextChars, parseJsonSharingLongStrings } from "../text/index.ts";

const statusSchema = v.looseObject({
  kind: v.optional(v.string()),
  status: v.optional(v.string()),
  message: v.optional(v.string()),
  reason: v.optional(v.string()),
  code: v.optional(v.number()),
  details: v.optional(v.nullable(v.looseObject({ retryAfterSeconds: v.optional(v.number()) }))),
});

/** Reasons client-go assumes when a body carries none (NewGenericServerResponse). */
const reasonByCode: Readonly<Record<number, string>> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Gone",
  413: "RequestEntityTooLarge",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/** Parses a `Retry-After` header given in seconds. */
export function retryAfterHeader(value: string | null): number | undefined {
  if (value === null) return undefined;
  const n = Number.parseInt(value.trim(), 10);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/**
 * Builds an ApiError from an HTTP status and whatever body came with it. A `Status` object supplies
 * reason, message and retryAfterSeconds; otherwise the reason follows the HTTP code.
 */
export function apiErrorFrom(httpStatus: number, body: unknown, retryAfter?: number): ApiError {
  const parsed = v.safeParse(statusSchema, body);
  const st = parsed.success && parsed.output.kind === "Status" ? parsed.output : undefined;
  const code = st?.code !== undefined && st.code > 0 ? st.code : httpStatus;
  const reason = st?.reason !== undefined && st.reason !== "" ? st.reason : (reasonByCode[code] ?? "Unknown");
  const message =
    st?.message !== undefined && st.message !== ""
      ? st.message
      : typeof body === "string" && body !== ""
        ? body.slice(0, 512)
        : `the server responded with status ${code}`;
  return new ApiError(code, reason, message, st?.details?.retryAfterSeconds ?? retryAfter);
}

/** JSON-parse a response text, keeping it as a string when it is not JSON (proxies answer with HTML). */
export function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    // A big object (a Secret of a big OSC) keeps its long values as slices of the text, not copies (issue 27).
    return text.length >= bigTextChars ? parseJsonSharingLongStrings(text) : (JSON.parse(text) as unknown);
  } catch {
    // Not JSON: error pages from proxies or load balancers; the caller reports the raw text.
    return text;
  }
}
