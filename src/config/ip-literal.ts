/**
 * Whether a listener address is an IP literal, read as node:net's isIP reads it. Written here
 * because importing node:net for the config check loaded Bun's net and stream modules before the
 * first API request (interleaved A/B, 150 triples: spawn → /readyz ≈ 1.8 ms later, agent CPU ≈ 1.6 ms
 * more). The D-Bus client's require of node:net later did not cost that: its import stage measured
 * 0.3 ms with and without the early import.
 */

/** Four decimal parts 0–255, without leading zeros. */
const isIpv4 = (text: string): boolean => {
  const parts = text.split(".");
  return parts.length === 4 && parts.every((p) => /^(?:0|[1-9][0-9]{0,2})$/.test(p) && Number(p) <= 255);
};

const GROUP = /^[0-9A-Fa-f]{1,4}$/;
/** Zone identifiers as isIP accepts them after `%` (`fe80::1%eth0`). */
const ZONE = /^[0-9A-Za-z.:-]+$/;

/** The 16-bit groups of one side of `::` ("" = none); a dotted quad may only end the address. */
const groupCount = (side: string, last: boolean): number | undefined => {
  if (side === "") return 0;
  const groups = side.split(":");
  let count = 0;
  for (const [i, g] of groups.entries()) {
    if (GROUP.test(g)) count += 1;
    else if (last && i === groups.length - 1 && isIpv4(g)) count += 2;
    else return undefined;
  }
  return count;
};

/** Eight groups, or fewer around one `::` that stands for at least one; optional zone. */
const isIpv6 = (text: string): boolean => {
  const percent = text.indexOf("%");
  const address = percent === -1 ? text : text.slice(0, percent);
  if (percent !== -1 && !ZONE.test(text.slice(percent + 1))) return false;
  const halves = address.split("::");
  if (halves.length > 2) return false;
  if (halves.length === 1) return groupCount(address, true) === 8;
  const left = groupCount(halves[0] ?? "", false);
  const right = groupCount(halves[1] ?? "", true);
  return left !== undefined && right !== undefined && left + right <= 7;
};

export const isIpLiteral = (text: string): boolean => isIpv4(text) || isIpv6(text);
