/** One line of `lsblk -P` output: column name → value (escapes such as `\x20` decoded). */
export type LsblkRow = Readonly<Record<string, string>>;

const pair = /([A-Za-z0-9_:%.-]+)="((?:[^"\\]|\\.)*)"/g;

const unescapeValue = (value: string): string =>
  value.replace(/\\x([0-9a-fA-F]{2})|\\(.)/g, (_m, hex: string | undefined, ch: string | undefined) =>
    hex !== undefined ? String.fromCharCode(Number.parseInt(hex, 16)) : (ch ?? ""),
  );

/** Parses `KEY="value" KEY="value"` lines; blank lines are skipped. */
export function parseLsblkPairs(output: string): LsblkRow[] {
  const rows: LsblkRow[] = [];
  for (const line of output.split("\n")) {
    if (line.trim() === "") continue;
    const row: Record<string, string> = {};
    for (const m of line.matchAll(pair)) {
      const [, key, value] = m;
      if (key !== undefined && value !== undefined) row[key] = unescapeValue(value);
    }
    rows.push(row);
  }
  return rows;
}
