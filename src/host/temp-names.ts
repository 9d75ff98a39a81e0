/**
 * The names of HostFs's temp files: `.<name>.tmp-<12 hex digits>` beside the target. Created and
 * recognised here only, so a clean-up can never take anything but a temp file this agent wrote.
 */
const SUFFIX_BYTES = 6;
const OWN_TEMP = /^\..+\.tmp-[0-9a-f]{12}$/;

/** A fresh temp name for `name` (Web Crypto: node:crypto stays out of start-up). */
export const tempNameFor = (name: string): string =>
  `.${name}.tmp-${Buffer.from(crypto.getRandomValues(new Uint8Array(SUFFIX_BYTES))).toString("hex")}`;

/** True only for names `tempNameFor` makes. */
export const isOwnTempName = (name: string): boolean => OWN_TEMP.test(name);
