/** An IP address could not be parsed (Go's netip.ParseAddr / ParsePrefix rules). */
export class IpParseError extends Error {
  override readonly name = "IpParseError";
  constructor(readonly input: string) {
    super(`ParseAddr(${JSON.stringify(input)}): unable to parse IP`);
  }
}

/** A parsed address: 4 or 16 bytes, compared byte-wise like netip.Addr (an IPv4-mapped IPv6 differs from IPv4). */
export interface IpAddr {
  readonly bytes: readonly number[];
  /** Canonical text: dotted quad, or RFC 5952 for IPv6 (what netip.Addr.String prints). */
  readonly text: string;
}

function parseV4(s: string): number[] | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    // Go refuses leading zeros (ambiguous octal) and anything but decimal digits.
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out.push(n);
  }
  return out;
}

function parseV6(s: string): number[] | undefined {
  const zone = s.indexOf("%");
  if (zone === 0 || zone === s.length - 1) return undefined;
  const addr = zone > 0 ? s.slice(0, zone) : s;
  const halves = addr.split("::");
  if (halves.length > 2) return undefined;
  const groups = (h: string): number[] | undefined => {
    if (h === "") return [];
    const out: number[] = [];
    const parts = h.split(":");
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (i === parts.length - 1 && p.includes(".")) {
        const v4 = parseV4(p);
        if (v4 === undefined) return undefined;
        out.push(v4[0]!, v4[1]!, v4[2]!, v4[3]!);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return undefined;
        const n = parseInt(p, 16);
        out.push(n >> 8, n & 0xff);
      }
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (head === undefined || tail === undefined) return undefined;
  if (halves.length === 1) return head.length === 16 ? head : undefined;
  const fill = 16 - head.length - tail.length;
  return fill >= 2 ? [...head, ...new Array<number>(fill).fill(0), ...tail] : undefined;
}

/** RFC 5952: lower-case hex, the longest run (≥ 2) of zero groups as "::", IPv4-mapped as ::ffff:a.b.c.d. */
function formatV6(b: readonly number[]): string {
  const g = Array.from({ length: 8 }, (_, i) => (b[2 * i]! << 8) | b[2 * i + 1]!);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return `::ffff:${b.slice(12).join(".")}`;
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(":");
  return best < 0 ? hex(g) : `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
}

/** netip.ParseAddr without zones in the result text. */
export function parseIp(input: string): IpAddr {
  const v4 = input.includes(":") ? undefined : parseV4(input);
  if (v4 !== undefined) return { bytes: v4, text: v4.join(".") };
  const v6 = input.includes(":") ? parseV6(input) : undefined;
  if (v6 === undefined) throw new IpParseError(input);
  return { bytes: v6, text: formatV6(v6) };
}

/** The address part of CIDR text (`10.0.0.5/24`), as netip.ParsePrefix(...).Addr(). */
export function parsePrefixAddr(input: string): IpAddr {
  const slash = input.indexOf("/");
  const bits = slash < 0 ? "" : input.slice(slash + 1);
  if (slash < 0 || !/^(0|[1-9][0-9]*)$/.test(bits)) throw new IpParseError(input);
  const addr = input.slice(0, slash);
  if (addr.includes("%")) throw new IpParseError(input); // prefixes carry no zone
  const ip = parseIp(addr);
  if (Number(bits) > ip.bytes.length * 8) throw new IpParseError(input);
  return ip;
}

export const sameIp = (a: IpAddr, b: IpAddr): boolean => a.bytes.length === b.bytes.length && a.bytes.every((x, i) => x === b.bytes[i]);
