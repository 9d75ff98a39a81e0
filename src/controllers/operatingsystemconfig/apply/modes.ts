import type { OscFile } from "../../../osc/index.ts";
import { nodeRef } from "../../events.ts";
import type { StepContext } from "./context.ts";

/** The mode of a file without `permissions` (§6.1). */
const defaultFileMode = 0o600;
/** Only the permission bits are applied, as upstream does: no setuid, setgid or sticky bit from an OSC. */
const permissionBits = 0o777;
/** Paths one warning event lists; the rest are counted. */
const maxListedPaths = 10;

const octal = (n: number): string => `0${n.toString(8)}`;

/** The mode a file gets: its `permissions` (default 0600) reduced to the 0777 bits. */
export const fileMode = (f: Pick<OscFile, "permissions">): number => (f.permissions ?? defaultFileMode) & permissionBits;

/** Whether `permissions` asks for more than the 0777 bits (setuid/setgid/sticky, or a value above 0o7777). */
const hasExtraModeBits = (f: Pick<OscFile, "permissions">): boolean => ((f.permissions ?? 0) & ~permissionBits) !== 0;

/**
 * Warns about files whose `permissions` carry bits the agent drops: one log line per file and one
 * Warning event on the Node naming them (a few at most, so a large OSC costs one API call).
 */
export async function warnDroppedModeBits(ctx: StepContext, files: readonly OscFile[]): Promise<void> {
  const { log, events } = ctx.ports;
  const masked = files.filter(hasExtraModeBits);
  if (masked.length === 0) return;
  for (const f of masked) {
    log.warn("Applying only the permission bits of a file's mode", {
      path: f.path,
      requested: octal(f.permissions ?? 0),
      applied: octal(fileMode(f)),
    });
  }
  if (ctx.node === undefined) return;
  const listed = masked.slice(0, maxListedPaths).map((f) => `"${f.path}" (${octal(f.permissions ?? 0)} → ${octal(fileMode(f))})`);
  const more = masked.length > maxListedPaths ? ` and ${masked.length - maxListedPaths} more` : "";
  const note = `permissions with setuid, setgid, sticky or out-of-range bits are not applied, only the 0777 bits: ${listed.join(", ")}${more}`;
  await events.event(nodeRef(ctx.node), "Warning", "FilePermissionsReduced", "Reconcile", note);
}
