import type { Cluster } from "./cluster.ts";
import type { OscVersion } from "./osc.ts";
import { done, notYet, pollUntil } from "./poll.ts";
import type { StepDeps } from "./steps-boot.ts";

/** Shared checks of the scenario steps: each throws an Error whose message is the FAIL reason. */
export const expect = (cond: boolean, what: string): void => {
  if (!cond) throw new Error(what);
};

export const nodePath = (d: StepDeps): string => `/api/v1/nodes/${d.ctx.nodeName}`;

export async function waitNodeChecksum(
  d: StepDeps,
  cluster: Cluster,
  checksum: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  await pollUntil(
    async (s) => {
      const node = await cluster.kube.get(nodePath(d), s);
      const got = node.metadata.annotations?.["checksum/cloud-config-data"];
      return got === checksum
        ? done(true)
        : notYet(`Node annotation checksum/cloud-config-data=${got ?? "<unset>"}, want ${checksum.slice(0, 12)}…`);
    },
    { what: "OSC applied", timeoutMs, intervalMs: 2000, signal },
  );
}

/** Files (mode + sha256) and units (active) of an OSC version, checked inside the guest. */
export async function checkOnDisk(d: StepDeps, osc: OscVersion, signal: AbortSignal): Promise<void> {
  const lines = osc.files.map((f) => `echo "${f.path} $(stat -c %a ${f.path} 2>&1) $(sha256sum < ${f.path} | cut -d' ' -f1)"`);
  const out = await d.guest.run(lines.join("\n"), signal);
  const byPath = new Map(
    out
      .trim()
      .split("\n")
      .map((l) => {
        const [p, ...rest] = l.split(" ");
        return [p ?? "", rest] as const;
      }),
  );
  for (const f of osc.files) {
    const [mode, sha] = byPath.get(f.path) ?? [];
    expect(mode === f.mode, `${f.path}: mode ${mode}, want ${f.mode}`);
    const want = new Bun.CryptoHasher("sha256").update(f.content).digest("hex");
    expect(sha === want, `${f.path}: content differs`);
  }
  const agentless = osc.units.filter((u) => u !== "gardener-node-agent.service");
  const states = (await d.guest.exec(`systemctl is-active ${agentless.join(" ")}`, signal)).out.trim().split("\n");
  agentless.forEach((u, i) => {
    expect(states[i] === "active", `${u} is ${states[i]}`);
  });
}

/** InvocationID@ActiveEnterTimestamp per unit: changes exactly when systemd (re)started the unit. */
export const unitIds = async (d: StepDeps, units: readonly string[], signal: AbortSignal): Promise<Map<string, string>> => {
  const ids = new Map<string, string>();
  for (const u of units) {
    const props = await d.guest.unitProps(u, ["InvocationID", "ActiveEnterTimestamp", "ActiveState"], signal);
    ids.set(u, `${props.get("InvocationID")}@${props.get("ActiveEnterTimestamp")}`);
  }
  return ids;
};
