/**
 * Go `time.Duration` text: `time.ParseDuration`-compatible parsing and `Duration.String()` formatting.
 * Values are carried as milliseconds (fractional below 1 ms), which is what timers take; nanosecond
 * precision survives a round trip for durations up to about 104 days.
 */

export class DurationError extends Error {
  override readonly name = "DurationError";
  constructor(
    readonly input: string,
    /** What is wrong, without the input (`missing unit in duration`). */
    readonly reason: string,
    /** Go's wording when it quotes part of the input (`unknown unit "x" in duration`). */
    goReason = reason,
  ) {
    super(`time: ${goReason} ${JSON.stringify(input)}`);
  }
}

const NS_PER_UNIT: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  "\u00b5s": 1_000n, // micro sign
  "\u03bcs": 1_000n, // Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** math.MaxInt64: Go durations are int64 nanoseconds. */
const MAX_NS = (1n << 63n) - 1n;

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9";

/** Parses a Go duration string (`1h30m`, `500ms`, `-1.5s`, `0`) into nanoseconds. */
export const parseDurationNs = (input: string): bigint => {
  let s = input;
  let negative = false;
  if (s.startsWith("-") || s.startsWith("+")) {
    negative = s.startsWith("-");
    s = s.slice(1);
  }
  if (s === "0") return 0n;
  if (s === "") throw new DurationError(input, "invalid duration");
  let total = 0n;
  while (s !== "") {
    let i = 0;
    while (isDigit(s[i])) i++;
    const intPart = s.slice(0, i);
    let fracPart = "";
    if (s[i] === ".") {
      const start = ++i;
      while (isDigit(s[i])) i++;
      fracPart = s.slice(start, i);
    }
    if (intPart === "" && fracPart === "") throw new DurationError(input, "invalid duration");
    let j = i;
    while (j < s.length && s[j] !== "." && !isDigit(s[j])) j++;
    const unitText = s.slice(i, j);
    if (unitText === "") throw new DurationError(input, "missing unit in duration");
    const unit = NS_PER_UNIT[unitText];
    if (unit === undefined)
      throw new DurationError(input, "unknown unit in duration", `unknown unit ${JSON.stringify(unitText)} in duration`);
    let value = BigInt(intPart === "" ? "0" : intPart) * unit;
    if (fracPart !== "") {
      // Truncate like Go: only as many fractional digits as the unit can hold matter.
      const scale = 10n ** BigInt(fracPart.length);
      value += (BigInt(fracPart) * unit) / scale;
    }
    total += value;
    if (total > MAX_NS) throw new DurationError(input, "invalid duration");
    s = s.slice(j);
  }
  return negative ? -total : total;
};

/** Parses a Go duration string into milliseconds. */
export const parseDuration = (input: string): number => Number(parseDurationNs(input)) / 1e6;

const fmtFrac = (v: bigint, digits: number): [string, bigint] => {
  let frac = "";
  let printed = false;
  let rest = v;
  for (let i = 0; i < digits; i++) {
    const digit = rest % 10n;
    printed = printed || digit !== 0n;
    if (printed) frac = `${digit}${frac}`;
    rest /= 10n;
  }
  return [printed ? `.${frac}` : "", rest];
};

/** Go's `Duration.String()` for nanoseconds: `12h0m0s`, `1m30s`, `1.5ms`, `0s`. */
export const formatDurationNs = (ns: bigint): string => {
  if (ns === 0n) return "0s";
  const sign = ns < 0n ? "-" : "";
  let u = ns < 0n ? -ns : ns;
  if (u < 1_000_000_000n) {
    if (u < 1_000n) return `${sign}${u}ns`;
    const [digits, unit] = u < 1_000_000n ? [3, "\u00b5s"] : [6, "ms"];
    const [frac, whole] = fmtFrac(u, digits);
    return `${sign}${whole}${frac}${unit}`;
  }
  const [frac, secs] = fmtFrac(u, 9);
  u = secs;
  let out = `${u % 60n}${frac}s`;
  u /= 60n;
  if (u > 0n) {
    out = `${u % 60n}m${out}`;
    u /= 60n;
    if (u > 0n) out = `${u}h${out}`;
  }
  return sign + out;
};

/** Go's canonical form of a duration given in milliseconds. */
export const formatDuration = (ms: number): string => formatDurationNs(BigInt(Math.round(ms * 1e6)));
