/**
 * Lenient semantic versions as the Go agent reads them (Masterminds/semver `NewVersion`):
 * an optional `v`, missing minor/patch read as 0, optional pre-release and build metadata.
 */

export interface SemVer {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  readonly prerelease: string;
  readonly metadata: string;
}

export class SemVerError extends Error {
  override readonly name = "SemVerError";
  constructor(readonly input: string) {
    super(`invalid semantic version ${JSON.stringify(input)}`);
  }
}

const IDENTS = "[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*";
const LENIENT = new RegExp(`^v?([0-9]+)(?:\\.([0-9]+))?(?:\\.([0-9]+))?(?:-(${IDENTS}))?(?:\\+(${IDENTS}))?$`);

/** Parses `1.28.2`, `v1.33.0`, `1.33`, `v1.36.2-rc.1`; anything else (including "") throws SemVerError. */
export const parseSemVer = (input: string): SemVer => {
  const m = LENIENT.exec(input);
  if (m === null) throw new SemVerError(input);
  // Numeric pre-release identifiers must not carry leading zeros (semver 2.0 §9).
  const prerelease = m[4] ?? "";
  if (prerelease.split(".").some((id) => /^0[0-9]+$/.test(id))) throw new SemVerError(input);
  return {
    major: Number(m[1]),
    minor: Number(m[2] ?? "0"),
    patch: Number(m[3] ?? "0"),
    prerelease,
    metadata: m[5] ?? "",
  };
};

/** Canonical `MAJOR.MINOR.PATCH[-pre][+meta]` without the `v`. */
const formatSemVer = (v: SemVer): string =>
  `${v.major}.${v.minor}.${v.patch}${v.prerelease === "" ? "" : `-${v.prerelease}`}${v.metadata === "" ? "" : `+${v.metadata}`}`;

/** `v1.33` → `1.33.0`; throws SemVerError for non-semver text. */
export const canonicalSemVer = (input: string): string => formatSemVer(parseSemVer(input));

/** Kubernetes minors this agent supports, as `[major, minor]`. */
const supportedKubernetesMinors: readonly (readonly [number, number])[] = [
  [1, 32],
  [1, 33],
  [1, 34],
  [1, 35],
  [1, 36],
];

/** `1.32, 1.33, …` for messages. */
export const supportedKubernetesMinorsText = supportedKubernetesMinors.map(([major, minor]) => `${major}.${minor}`).join(", ");

/**
 * Upstream's check: strip every `v`, cut at the first `-`, `+` or `~`, then match `~MAJOR.MINOR`
 * (>= X.Y.0, < X.(Y+1).0) against each supported entry.
 */
export const isSupportedKubernetesVersion = (version: string): boolean => {
  const stripped = version.replaceAll("v", "").split(/[-+~]/, 1)[0] ?? "";
  let parsed: SemVer;
  try {
    parsed = parseSemVer(stripped);
  } catch (err) {
    if (err instanceof SemVerError) return false;
    throw err;
  }
  return supportedKubernetesMinors.some(([major, minor]) => parsed.major === major && parsed.minor === minor);
};
