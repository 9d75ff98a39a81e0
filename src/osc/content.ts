import { Base64Error, InvalidCodecError } from "./errors.ts";

const b64Strict = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Standard base64 with padding; CR/LF are ignored (as Go's decoder does), anything else invalid is an error. */
export function decodeBase64Strict(data: string): Uint8Array {
  const s = data.replace(/[\r\n]/g, "");
  if (!b64Strict.test(s)) throw new Base64Error("illegal base64 data");
  return new Uint8Array(Buffer.from(s, "base64"));
}

/** Bytes of an inline file content: encoding "" = verbatim UTF-8, "b64" = strict base64. */
export function decodeInline(encoding: string, data: string): Uint8Array {
  switch (encoding) {
    case "":
      return new TextEncoder().encode(data);
    case "b64":
      return decodeBase64Strict(data);
    default:
      throw new InvalidCodecError(encoding);
  }
}
