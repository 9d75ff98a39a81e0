import { keepOutOfTopTier } from "../../../jit/index.ts";
import { unitNameProblem } from "../../../systemd/index.ts";
import { quoteName } from "../../../untrusted/index.ts";
import { OscInputError } from "./input-error.ts";

/**
 * Longest file name the agent can write: the host module stages a write as `.<name>.tmp-<12 hex>` in
 * the same directory, and a directory entry holds at most 255 bytes (NAME_MAX).
 */
const maxFileNameBytes = 255 - ".".length - ".tmp-".length - 12;
/** PATH_MAX includes the terminating NUL. */
const maxPathBytes = 4095;

const byteLength = (s: string): number => Buffer.byteLength(s, "utf8");
const isDotSegment = (s: string): boolean => s === "." || s === "..";
const isLongName = (s: string): boolean => byteLength(s) > maxFileNameBytes;
/** A newline in a path or name would end up in unit files, logs and events as a line break. */
const controlChars = /[\x00-\x1f\x7f]/;

/** Absolute, normalised host path without "." / ".." segments, no control characters, within the kernel's limits. */
export function validateFilePath(path: string): void {
  const q = quoteName(path);
  if (!path.startsWith("/")) throw new OscInputError(`file path ${q} is not absolute`, path);
  const segs = path.split("/").slice(1);
  if (segs.some(isDotSegment)) throw new OscInputError(`file path ${q} must not contain "." or ".." segments`, path);
  if (controlChars.test(path)) throw new OscInputError(`file path ${q} contains a control character`, path);
  if (segs.at(-1) === "") throw new OscInputError(`file path ${q} names a directory`, path);
  if (byteLength(path) > maxPathBytes) throw new OscInputError(`file path ${q} is longer than ${maxPathBytes} bytes`, path);
  if (segs.some(isLongName)) {
    throw new OscInputError(`file path ${q} has a name longer than ${maxFileNameBytes} bytes`, path);
  }
}

/** A unit name becomes one file name under /etc/systemd/system (and `<name>.d` for its drop-ins). */
export function validateUnitName(name: string): void {
  const problem = unitNameProblem(name);
  if (problem !== undefined) throw new OscInputError(`invalid unit name ${quoteName(name)}: ${problem}`, name);
  if (byteLength(`${name}.d`) > maxFileNameBytes) {
    throw new OscInputError(
      `invalid unit name ${quoteName(name)}: longer than the ${maxFileNameBytes - 2} characters the agent can write`,
      name,
    );
  }
}

/**
 * A unit being removed only has to be a safe file name: it was written by an earlier OSC (perhaps by
 * the Go agent, which did not check names), and refusing it would leave it behind for ever.
 */
export function validateRemovedUnitName(name: string): void {
  if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
    throw new OscInputError(`invalid unit name ${quoteName(name)}: not a file name`, name);
  }
}

/** A drop-in name becomes one file name in `<unit>.d/`. */
export function validateDropInName(unit: string, name: string): void {
  const problem =
    name === "" || name === "." || name === ".."
      ? "is not a file name"
      : name.includes("/")
        ? 'contains "/"'
        : controlChars.test(name)
          ? "contains a control character"
          : byteLength(name) > maxFileNameBytes
            ? `is longer than ${maxFileNameBytes} bytes`
            : undefined;
  if (problem !== undefined)
    throw new OscInputError(`invalid drop-in name ${quoteName(name)} of unit ${quoteName(unit)}: ${problem}`, unit);
}
// Issue 25: per file or line of a 1000-file apply (jit/top-tier.ts).
keepOutOfTopTier(byteLength, isDotSegment, isLongName);
