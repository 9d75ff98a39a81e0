// An OSC with 1000 units (issue 10 item 2): the system bus allows 128 pending replies per connection
// (dbus-daemon's default, enforced by the real daemon behind the systemd double), so the agent must
// bound its D-Bus calls in flight. Before, every apply failed with "maximum number of pending
// replies per connection has been reached".
import { afterEach, expect, test } from "bun:test";
import { realClock } from "../../src/clock/index.ts";
import type { Logger } from "../../src/log/types.ts";
import { createDbusSystemd } from "../../src/systemd/dbus.ts";
import { startSystemdDouble, type SystemdDouble } from "../doubles/systemd/index.ts";
import { startSandbox, type Sandbox } from "../harness/sandbox.ts";

const UNITS = 1000;
const unitName = (i: number) => `many-${String(i).padStart(4, "0")}.service`;

let sandbox: Sandbox | undefined;
let double: SystemdDouble | undefined;
afterEach(async () => {
  await sandbox?.stop();
  sandbox = undefined;
  await double?.stop();
  double = undefined;
});

const log: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };

test("1000 enables and restarts issued at once all succeed on one connection", async () => {
  double = await startSystemdDouble({ clock: realClock });
  const systemd = await createDbusSystemd({ address: double.address, log });
  try {
    const names = Array.from({ length: UNITS }, (_, i) => unitName(i));
    await Promise.all(names.map((n) => systemd.enable([n])));
    await Promise.all(names.map((n) => systemd.restart(n)));
    expect(double.actions.filter((a) => a.action === "Enable")).toHaveLength(UNITS);
    expect(double.actions.filter((a) => a.action === "Restart")).toHaveLength(UNITS);
  } finally {
    systemd.close();
  }
}, 120_000);

test("the compiled agent converges on an OSC with 1000 units", async () => {
  const sb = await startSandbox({ nodeName: "many-units" });
  sandbox = sb;
  const units = Array.from(
    { length: UNITS },
    (_, i) => `  - name: ${unitName(i)}\n    content: "[Service]\\nExecStart=/bin/true\\n"\n`,
  ).join("");
  const checksum = sb.setOsc(`apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  units:
${units}`);
  const agent = sb.spawnAgent();
  const started = Date.now();
  await sb.waitForApplied(checksum, 120_000);
  console.log(`many-units: 1000 units applied in ${Date.now() - started} ms`);
  await agent.stop();
  expect(
    agent
      .output()
      .split("\n")
      .filter((l) => l.includes("maximum number of pending replies")),
  ).toEqual([]);
  for (const i of [0, 499, 999]) expect(sb.systemd.units.get(unitName(i))?.activeState).toBe("active");
  const restarted = new Set(
    sb.systemd.actions
      .filter((a) => a.action === "Restart")
      .flatMap((a) => a.units)
      .filter((u) => u.startsWith("many-")),
  );
  expect(restarted.size).toBe(UNITS);
}, 180_000);
