/**
 * The names of HostFs's temp files: `.<name>.tmp-<12 hex digits>` beside the target. Created and
 * recognised here only, so a clean-up can never take anything but a temp file this agent wrote.
 */
const SUFFIX_BYTES = 6;
const OWN_TEMP = /^\..+\.tmp-[0-9a-f]{12}$/;

/** A fresh temp name for `name` (Web Crypto: node:crypto stays out of start-up). */
export const tempNameFor = (name: string): string => tempNamer(1)(name);

/** Most suffixes drawn at once by a `tempNamer` (getRandomValues fills at most 64 KiB). */
const namesPerDraw = 4096;

/**
 * `tempNameFor` for the `count` members of a group, their random suffixes drawn together (one call for
 * a 1000-file group instead of one each; issue 25). The names are the same kind, as random.
 */
export function tempNamer(count: number): (name: string) => string {
  let hex = "";
  let at = 0;
  let left = count;
  return (name) => {
    if (at === hex.length) {
      const n = Math.max(1, Math.min(left, namesPerDraw));
      hex = Buffer.from(crypto.getRandomValues(new Uint8Array(SUFFIX_BYTES * n))).toString("hex");
      at = 0;
    }
    left--;
    const suffix = hex.slice(at, at + SUFFIX_BYTES * 2);
    at += SUFFIX_BYTES * 2;
    return `.${name}.tmp-${suffix}`;
  };
}

/** True only for names `tempNameFor` and `tempNamer` make. */
export const isOwnTempName = (name: string): boolean => OWN_TEMP.test(name);
