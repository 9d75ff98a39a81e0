import * as v from "valibot";
import { decodeBase64Strict } from "../../osc/index.ts";

const tokenDataKey = "token";

const secretDataSchema = v.looseObject({ data: v.nullish(v.record(v.string(), v.string())) });

/** `data.token` is absent or empty: nothing to write (the existing file stays). */
export class TokenMissingError extends Error {
  override readonly name = "TokenMissingError";
  constructor() {
    super(`secret key "${tokenDataKey}" does not exist or is empty`);
  }
}

/** The Secret's data is not what the API serves (not a string map, or not base64). */
export class TokenDataError extends Error {
  override readonly name = "TokenDataError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** The token bytes of a Secret as returned by the API (`data` values are base64). */
export function tokenBytes(secret: unknown): Uint8Array {
  const parsed = v.safeParse(secretDataSchema, secret);
  if (!parsed.success) throw new TokenDataError("secret data is not a map of base64 strings");
  const encoded = parsed.output.data?.[tokenDataKey];
  if (encoded === undefined || encoded === "") throw new TokenMissingError();
  let bytes: Uint8Array;
  try {
    bytes = decodeBase64Strict(encoded);
  } catch (err) {
    throw new TokenDataError(`secret key "${tokenDataKey}" is not valid base64`, { cause: err });
  }
  if (bytes.length === 0) throw new TokenMissingError();
  return bytes;
}

export const sameBytes = (a: Uint8Array | undefined, b: Uint8Array): boolean =>
  a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
