/** systemd's UNIT_NAME_MAX (256) counts the NUL. */
const maxUnitNameLength = 255;

/** systemd's unit types (the valid suffixes of a unit name). */
const unitTypes: ReadonlySet<string> = new Set([
  "service",
  "socket",
  "target",
  "device",
  "mount",
  "automount",
  "swap",
  "timer",
  "path",
  "slice",
  "scope",
]);
/** systemd's VALID_CHARS plus "@" (unit_name_is_valid). */
const unitNameChars = /^[A-Za-z0-9:\-_.\\@]+$/;

/** Why `name` is not a unit name systemd accepts (unit_name_is_valid, UNIT_NAME_ANY), or undefined. */
export function unitNameProblem(name: string): string | undefined {
  if (name.length === 0) return "is empty";
  if (name.length > maxUnitNameLength) return `is longer than ${maxUnitNameLength} characters`;
  if (!unitNameChars.test(name)) return 'contains a character other than letters, digits, ":", "-", "_", ".", "\\" and "@"';
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return 'has no unit type suffix (such as ".service")';
  if (!unitTypes.has(name.slice(dot + 1))) return `has an unknown unit type suffix (valid: ${[...unitTypes].join(", ")})`;
  if (name.indexOf("@") === 0) return 'has an empty prefix before "@"';
  return undefined;
}
