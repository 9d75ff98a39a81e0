import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs, type HostFs } from "../../../host/index.ts";
import { decodeOsc } from "../../../osc/index.ts";
import { computeChanges } from "./diff.ts";
import { disruptionPolicyPath } from "./disruption-policy.ts";
import { disruptionOnce } from "./pending-disruption.ts";
import { writeLastApplied } from "./state.ts";

const before = decodeOsc(`
spec:
  units:
  - {name: kubelet.service, content: "[Service]\\nExecStart=/k\\n"}
`);
const after = decodeOsc(`
spec:
  units:
  - {name: kubelet.service, content: "[Service]\\nExecStart=/k2\\n"}
`);

let root: string;
let host: HostFs;
let reads: string[];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "pending-disruption-"));
  await mkdir(join(root, "var/lib/gardener-node-agent"), { recursive: true });
  const real = createHostFs(root);
  reads = [];
  host = new Proxy(real, {
    get: (t, k) =>
      k === "readFile"
        ? (path: string) => {
            reads.push(path);
            return t.readFile(path);
          }
        : Reflect.get(t, k),
  });
  await writeLastApplied(real, before);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("disruptionOnce", () => {
  test("plans and reads the policy on the first call only; every gate of the reconcile gets the same answer", async () => {
    await writeFile(join(root, disruptionPolicyPath.slice(1)), "rules:\n- {units: [kubelet.service], action: reload}\n");
    let planned = 0;
    const disruption = disruptionOnce(host, "host", after, async () => {
      planned++;
      return computeChanges(before, after, "c1", "host");
    });
    const [first, second] = await Promise.all([disruption(), disruption()]);
    const third = await disruption();
    expect(second).toBe(first);
    expect(third).toBe(first);
    expect(planned).toBe(1);
    expect(reads.filter((p) => p === disruptionPolicyPath)).toHaveLength(1);
    // The policy made the restart a reload: one unit touched, nothing disruptive.
    expect(first).toEqual({ disruptive: false, text: "", units: 1 });
  });

  test("an invalid policy is ignored and says why, without its text", async () => {
    await writeFile(join(root, disruptionPolicyPath.slice(1)), "rules:\n- units: [kubelet.service]\n  action: bounce-secret\n");
    const disruption = disruptionOnce(host, "host", after, async () => computeChanges(before, after, "c1", "host"));
    expect(await disruption()).toEqual({
      disruptive: true,
      text: "restarts kubelet.service",
      units: 1,
      policyIgnored: `${disruptionPolicyPath}: line 3: action must be one of none, reload, restart, daemon-reload`,
    });
  });
});
