/**
 * A name from input (file path, unit, image, URL) as it may appear in a message: escaped (no raw
 * newlines or control characters), at most 80 characters. Names are what operators need to find
 * the fault; content never goes into a message at all.
 */
export function quoteName(name: string): string {
  return JSON.stringify(name.length > 80 ? `${name.slice(0, 77)}...` : name);
}
