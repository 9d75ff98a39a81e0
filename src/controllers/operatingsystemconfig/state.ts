import type { HostFs } from "../../host/index.ts";
import { decodeChanges, decodeOsc, encodeChanges, encodeOsc, type Osc, type OscChanges } from "../../osc/index.ts";
import { changesPath, lastAppliedPath } from "./deps.ts";

/** The last fully applied OSC, undefined before the first complete apply. */
export async function readLastApplied(host: HostFs): Promise<Osc | undefined> {
  const text = await host.readText(lastAppliedPath);
  return text === undefined ? undefined : decodeOsc(text);
}

export async function writeLastApplied(host: HostFs, osc: Osc): Promise<void> {
  await host.writeFileAtomic(lastAppliedPath, encodeOsc(osc), 0o600);
}

/** The persisted change set (ours or the Go agent's), undefined when there is none. */
export async function readChanges(host: HostFs): Promise<OscChanges | undefined> {
  const text = await host.readText(changesPath);
  return text === undefined ? undefined : decodeChanges(text);
}

export async function writeChanges(host: HostFs, changes: OscChanges): Promise<void> {
  await host.writeFileAtomic(changesPath, encodeChanges(changes), 0o600);
}
