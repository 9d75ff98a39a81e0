/** The name part of a qualified name (a label or annotation key after its prefix; a non-empty label value too). */
const namePart = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** At most 63 characters of letters, digits, `-`, `_` and `.`, alphanumeric at both ends. */
export const isQualifiedNamePart = (s: string): boolean => namePart.test(s);
