/**
 * What an error response says, as codes only: the OCI distribution `errors[].code` values
 * (`MANIFEST_UNKNOWN`, `UNAUTHORIZED`, …) or OAuth2's `error` (`invalid_grant`). The free-text
 * messages and details, and any body that is not such JSON (a proxy's HTML page), are left out: a
 * registry or proxy may echo anything there, credentials included.
 */
export function errorCodes(body: string): string {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return "";
  }
  if (typeof doc !== "object" || doc === null) return "";
  const codes: string[] = [];
  const errors = (doc as { errors?: unknown }).errors;
  if (Array.isArray(errors)) for (const e of errors.slice(0, 5)) codes.push((e as { code?: unknown } | null)?.code as string);
  codes.push((doc as { error?: unknown }).error as string);
  return [...new Set(codes.filter((c) => typeof c === "string" && /^[A-Za-z][A-Za-z0-9_]{0,39}$/.test(c)))].join(", ");
}

/** The codes of a response's error body (see errorCodes), "" when it has none. */
export async function responseErrorCodes(res: Response): Promise<string> {
  return errorCodes(await res.text().catch(() => ""));
}
