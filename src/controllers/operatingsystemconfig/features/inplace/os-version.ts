import { parseSemVer, SemVerError } from "../../../../config/index.ts";
import type { HostFs } from "../../../../host/index.ts";

const osReleasePath = "/etc/os-release";

export class OsVersionError extends Error {
  override readonly name = "OsVersionError";
}

const versionPattern = /\b\d+(?:\.\d+)*\b/;

/** §9.3: the first `PRETTY_NAME=` line, quotes stripped, first dotted number (`Garden Linux 1592.6` → `1592.6`). */
export function parseOsVersion(osRelease: string): string {
  const line = osRelease.split("\n").find((l) => l.startsWith("PRETTY_NAME="));
  if (line === undefined) throw new OsVersionError(`unable to find PRETTY_NAME in ${osReleasePath}`);
  const pretty = line
    .slice("PRETTY_NAME=".length)
    .trim()
    .replace(/^["']|["']$/g, "");
  const m = versionPattern.exec(pretty);
  if (m === null) throw new OsVersionError(`unable to find version in PRETTY_NAME ${JSON.stringify(pretty)}`);
  return m[0];
}

/** The running OS version, read under the root; a missing file is an error. */
export async function readOsVersion(host: HostFs): Promise<string> {
  const text = await host.readText(osReleasePath);
  if (text === undefined) throw new OsVersionError(`${osReleasePath} does not exist`);
  return parseOsVersion(text);
}

/** Drops every `v`, cuts at the first `-`, `+` or `~`. */
const normalise = (version: string): string => version.replaceAll("v", "").split(/[-+~]/)[0] ?? "";

/**
 * §9.3 version equality: `1.2` == `1.2.0`, `1.2.0-foo.12` == `1.2.0`, `1.1.0` ≠ `1.2.0`. An unparsable
 * desired version is an error; an unparsable current version is simply not equal.
 */
export function osVersionsEqual(current: string, desired: string): boolean {
  let want;
  try {
    want = parseSemVer(normalise(desired));
  } catch (err) {
    if (err instanceof SemVerError)
      throw new OsVersionError(`invalid desired operating system version ${JSON.stringify(desired)}`, { cause: err });
    throw err;
  }
  let have;
  try {
    have = parseSemVer(normalise(current));
  } catch (err) {
    // An OS version that is no semver cannot be the desired one (the desired one parsed).
    if (err instanceof SemVerError) return false;
    throw err;
  }
  return have.major === want.major && have.minor === want.minor && have.patch === want.patch;
}
