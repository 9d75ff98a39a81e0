import type { GateContext } from "../../src/controllers/operatingsystemconfig/gates/gate.ts";
import { decodeOsc, emptyChanges } from "../../src/osc/index.ts";

/** A gate's view of a live reconcile for unit tests: nothing pending, nothing disruptive; `over` replaces parts. */
export const testGateContext = (over: Partial<GateContext> = {}): GateContext => ({
  checksum: "c",
  osc: decodeOsc("spec: {}\n"),
  secret: undefined,
  serial: false,
  node: undefined,
  nodeKnownAtStart: true,
  changes: async () => emptyChanges("c"),
  disruption: async () => ({ disruptive: false, text: "", units: 0 }),
  dryRun: false,
  online: true,
  signal: new AbortController().signal,
  ...over,
});
