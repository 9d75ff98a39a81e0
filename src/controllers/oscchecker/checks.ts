import { posix } from "node:path";
import type { HostFs } from "../../host/index.ts";
import { decodeBase64Strict } from "../../osc/index.ts";
import * as f from "./findings.ts";
import type { Finding } from "./findings.ts";
import { exists, readOutcome, sha256Hex } from "./host-probe.ts";
import type { CheckedFile, CheckedUnit } from "./last-applied.ts";

/** Where a unit file is looked for, in this order (the first existing one counts). */
const unitDirectories = ["/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"] as const;

/** Expected bytes of an inline file, or the finding that prevents the comparison. */
function expectedBytes(file: CheckedFile, encoding: string, data: string): Uint8Array | Finding {
  switch (encoding) {
    case "":
    case "plain":
      return new TextEncoder().encode(data);
    case "b64":
    case "base64":
      try {
        return decodeBase64Strict(data);
      } catch {
        // Reported as an event: the checker is diagnostic and never fails on content.
        return f.fileDecodeError(file.path);
      }
    default:
      return f.fileUnsupportedEncoding(encoding, file.path);
  }
}

/**
 * One `spec.files[]` entry: only inline content with data and no image reference is compared
 * (SHA-256 of the expected bytes against the file at the cleaned path). `hostName` is not consulted.
 */
export async function checkFile(host: HostFs, file: CheckedFile): Promise<Finding | undefined> {
  const inline = file.inline;
  if (inline === undefined || inline.data === "" || file.hasImageRef) return undefined;
  const expected = expectedBytes(file, inline.encoding, inline.data);
  if (!(expected instanceof Uint8Array)) return expected;
  const actual = await readOutcome(host, file.path);
  if (actual.kind === "missing") return f.fileMissing(file.path);
  if (actual.kind === "error") return f.fileReadError(file.path);
  const want = sha256Hex(expected);
  const got = sha256Hex(actual.bytes);
  return want === got ? undefined : f.fileMismatch(file.path, want, got);
}

/** The unit file's path in the first unit directory where it exists, undefined when in none. */
export async function resolveUnitPath(host: HostFs, unitName: string): Promise<string | undefined> {
  for (const dir of unitDirectories) {
    const p = posix.join(dir, unitName);
    if (await exists(host, p)) return p;
  }
  return undefined;
}

const sameContent = (expected: string, actual: Uint8Array): boolean => sha256Hex(new TextEncoder().encode(expected)) === sha256Hex(actual);

/**
 * One `spec.units[]` entry: unit file (presence, content), drop-ins next to it, enable state
 * against the loaded-unit list, and dependency files. A unit found in no directory yields one
 * finding and nothing else is checked for it.
 */
export async function checkUnit(host: HostFs, unit: CheckedUnit, loadedUnits: ReadonlySet<string>): Promise<Finding[]> {
  const unitPath = await resolveUnitPath(host, unit.name);
  if (unitPath === undefined) return [f.unitFileMissing(unit.name)];
  const out: Finding[] = [];

  const raw = await readOutcome(host, unitPath);
  if (raw.kind !== "bytes") out.push(f.unitFileMissing(unit.name));
  else if (unit.content !== undefined && !sameContent(unit.content, raw.bytes)) out.push(f.unitMismatch(unit.name));

  const dropInDir = posix.join(posix.dirname(unitPath), `${posix.basename(unitPath)}.d`);
  for (const d of unit.dropIns) {
    const got = await readOutcome(host, posix.join(dropInDir, d.name));
    if (got.kind !== "bytes") out.push(f.dropInMissing(d.name, unit.name));
    else if (!sameContent(d.content, got.bytes)) out.push(f.dropInMismatch(d.name, unit.name));
  }

  if (unit.enable !== undefined) {
    let enabled = loadedUnits.has(unit.name);
    if (!enabled && unit.enable && raw.kind === "bytes") {
      // A unit without an [Install] section cannot be enabled: it is static and counts as enabled.
      enabled = !new TextDecoder().decode(raw.bytes).includes("[Install]");
    }
    if (enabled !== unit.enable) out.push(f.unitEnableMismatch(unit.name, unit.enable, enabled));
  }

  for (const dep of unit.filePaths) {
    if (!(await exists(host, dep))) out.push(f.dependencyMissing(dep, unit.name));
  }
  return out;
}
