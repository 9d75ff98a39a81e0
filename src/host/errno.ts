/** True when `err` is a Node system error with the given errno code (e.g. "ENOENT"). */
export function hasErrno(err: unknown, ...codes: string[]): boolean {
  if (typeof err !== "object" || err === null || !("code" in err)) return false;
  const code = (err as { code: unknown }).code;
  return typeof code === "string" && codes.includes(code);
}
