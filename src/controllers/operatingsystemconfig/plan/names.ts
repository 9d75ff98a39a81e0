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
/** At most 3 UTF-8 bytes per UTF-16 code unit: bytes are counted only where the limit can be reached. */
const isLongName = (s: string): boolean => s.length * 3 > maxFileNameBytes && byteLength(s) > maxFileNameBytes;
/** A newline in a path or name would end up in unit files, logs and events as a line break. */
const controlChars = /[\x00-\x1f\x7f]/;

/** Absolute, normalised host path without "." / ".." segments, no control characters, within the kernel's limits. */
export function validateFilePath(path: string): void {
  const problem = filePathProblem(path);
  if (problem !== undefined) throw new OscInputError(`file path ${quoteName(path)} ${problem}`, path);
}

/**
 * validateFilePath's judgement, in its order of checks; the quoted path is made only for an error (a
 * 1000-file apply checks every path: issue 25). Byte lengths are counted only where UTF-8 could exceed a
 * limit (at most 3 bytes per UTF-16 code unit).
 */
function filePathProblem(path: string): string | undefined {
  if (!path.startsWith("/")) return "is not absolute";
  const segs = path.split("/").slice(1);
  if (segs.some(isDotSegment)) return 'must not contain "." or ".." segments';
  if (controlChars.test(path)) return "contains a control character";
  if (segs.at(-1) === "") return "names a directory";
  if (path.length * 3 > maxPathBytes && byteLength(path) > maxPathBytes) return `is longer than ${maxPathBytes} bytes`;
  if (segs.some(isLongName)) {
    return `has a name longer than ${maxFileNameBytes} bytes`;
  }
  return undefined;
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
