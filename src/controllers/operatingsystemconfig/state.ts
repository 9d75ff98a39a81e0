import type { FileWrite, HostFs } from "../../host/index.ts";
import { decodeChanges, decodeOsc, encodeChanges, encodeOsc, type Osc, type OscChanges } from "../../osc/index.ts";
import { changesPath, lastAppliedPath } from "./deps.ts";

/**
 * The last-applied text this process wrote or read, with its decoded form: decoding a 1000-file OSC
 * costs ~100 ms, and every reconcile reads the file again. Only byte-identical text reuses the decoded
 * object (frozen, as callers share it); any edit on disk is decoded afresh. One entry per HostFs.
 */
const lastAppliedMemo = new WeakMap<HostFs, { readonly text: string; readonly osc: Osc }>();

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

function remember(host: HostFs, text: string): Osc {
  const osc = deepFreeze(decodeOsc(text));
  lastAppliedMemo.set(host, { text, osc });
  return osc;
}

/** The last fully applied OSC (read-only), undefined before the first complete apply. */
export async function readLastApplied(host: HostFs): Promise<Osc | undefined> {
  const text = await host.readText(lastAppliedPath);
  if (text === undefined) return undefined;
  const memo = lastAppliedMemo.get(host);
  return memo?.text === text ? memo.osc : remember(host, text);
}

/** Writes last-applied and decodes it once now, after the apply, so the next reconcile need not. */
export async function writeLastApplied(host: HostFs, osc: Osc): Promise<void> {
  const text = encodeOsc(osc);
  await host.writeFileAtomic(lastAppliedPath, text, 0o600);
  remember(host, text);
}

/** The persisted change set (ours or the Go agent's), undefined when there is none. */
export async function readChanges(host: HostFs): Promise<OscChanges | undefined> {
  const text = await host.readText(changesPath);
  return text === undefined ? undefined : decodeChanges(text);
}

export async function writeChanges(host: HostFs, changes: OscChanges): Promise<void> {
  await host.writeFileAtomic(changesPath, encodeChanges(changes), 0o600);
}

/** The changes file as a member of a file group (encoded now, written with the group). */
export function changesFileWrite(changes: OscChanges): FileWrite {
  return { path: changesPath, data: encodeChanges(changes), mode: 0o600 };
}
