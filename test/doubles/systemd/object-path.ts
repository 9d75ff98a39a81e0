const UNIT_PREFIX = "/org/freedesktop/systemd1/unit/";

/** systemd's bus_label_escape: [A-Za-z0-9] stay (a leading digit does not), every other byte becomes _xx. */
export function unitPath(name: string): string {
  const bytes = new TextEncoder().encode(name);
  if (bytes.length === 0) return `${UNIT_PREFIX}_`;
  let label = "";
  bytes.forEach((b, i) => {
    const alpha = (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);
    const digit = b >= 0x30 && b <= 0x39;
    label += alpha || (digit && i > 0) ? String.fromCharCode(b) : `_${b.toString(16).padStart(2, "0")}`;
  });
  return UNIT_PREFIX + label;
}

/** The unit name behind a unit object path, undefined for other paths. */
export function unitNameFromPath(path: string): string | undefined {
  if (!path.startsWith(UNIT_PREFIX)) return undefined;
  const label = path.slice(UNIT_PREFIX.length);
  if (label === "_") return "";
  const bytes: number[] = [];
  for (let i = 0; i < label.length; i++) {
    if (label[i] === "_") {
      bytes.push(Number.parseInt(label.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(label.charCodeAt(i));
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}
