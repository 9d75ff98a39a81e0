import { describe, expect, test } from "bun:test";
import { decodeOsc, type Osc } from "../../../osc/index.ts";
import { assessDisruption } from "./disruption.ts";
import { parseDisruptionPolicy } from "./disruption-policy.ts";
import { computeChanges } from "./diff.ts";

const osc = (src: string): Osc => decodeOsc(src);
const before = osc(`
spec:
  files:
  - {path: /etc/kubelet/ca.crt, content: {inline: {data: a}}}
  - {path: /etc/motd, content: {inline: {data: m}}}
  units:
  - {name: kubelet.service, content: "[Service]\\nExecStart=/k\\n", filePaths: [/etc/kubelet/ca.crt]}
  - {name: sshd.service, content: "[Service]\\nExecStart=/s\\n"}
  - {name: old.service, content: "[Service]\\nExecStart=/o\\n"}
`);

const assess = (after: Osc, policyText?: string) =>
  assessDisruption({
    changes: computeChanges(before, after, "c1", "host"),
    osc: after,
    lastApplied: before,
    policy: policyText === undefined ? undefined : parseDisruptionPolicy(policyText),
  });
const actions = (a: ReturnType<typeof assess>) => a.units.map((u) => `${u.unit}=${u.action}${u.rule ? `@${u.rule.index}` : ""}`);

const withCa = (data: string, extra = "") =>
  osc(`
spec:
  files:
  - {path: /etc/kubelet/ca.crt, content: {inline: {data: ${data}}}}
  - {path: /etc/motd, content: {inline: {data: m}}}
  units:
  - {name: kubelet.service, content: "[Service]\\nExecStart=/k${extra}\\n", filePaths: [/etc/kubelet/ca.crt]}
  - {name: sshd.service, content: "[Service]\\nExecStart=/s\\n"}
  - {name: old.service, content: "[Service]\\nExecStart=/o\\n"}
`);

describe("assessDisruption", () => {
  test("a change that only writes files is not disruptive", () => {
    const a = assess(
      osc(
        JSON.stringify({
          ...before,
          spec: { ...before.spec, files: [before.spec.files?.[0], { path: "/etc/motd", content: { inline: { data: "n" } } }] },
        }),
      ),
    );
    expect(a).toEqual({ disruptive: false, units: [], inPlace: [] });
  });

  test("without a policy a changed file restarts its unit, as upstream", () => {
    const a = assess(withCa("b"));
    expect(actions(a)).toEqual(["kubelet.service=restart"]);
    expect(a.disruptive).toBe(true);
  });

  test("a files rule turns the restart into a reload: not disruptive", () => {
    const a = assess(withCa("b"), "rules:\n- files: [/etc/kubelet/*.crt]\n  action: reload\n");
    expect(actions(a)).toEqual(["kubelet.service=reload@1"]);
    expect(a.units[0]?.why).toBe("file /etc/kubelet/ca.crt changed");
    expect(a.disruptive).toBe(false);
  });

  test("each cause is matched on its own and the strongest action wins", () => {
    const policy = "rules:\n- files: [/etc/kubelet/*]\n  action: none\n- units: [sshd.service]\n  action: none\n";
    expect(actions(assess(withCa("b", "x"), policy))).toEqual(["kubelet.service=restart"]);
    expect(actions(assess(withCa("b"), policy))).toEqual(["kubelet.service=none@1"]);
  });

  test("first matching rule wins", () => {
    const policy = "rules:\n- units: [kubelet.service]\n  action: daemon-reload\n- files: [/etc/**]\n  action: none\n";
    expect(actions(assess(withCa("b"), policy))).toEqual(["kubelet.service=daemon-reload@1"]);
  });

  test("stops and new units are not governed by the policy", () => {
    const after = osc(`
spec:
  files:
  - {path: /etc/kubelet/ca.crt, content: {inline: {data: a}}}
  - {path: /etc/motd, content: {inline: {data: m}}}
  units:
  - {name: kubelet.service, content: "[Service]\\nExecStart=/k\\n", filePaths: [/etc/kubelet/ca.crt]}
  - {name: sshd.service, enable: false, content: "[Service]\\nExecStart=/s\\n"}
  - {name: new.service, content: "[Service]\\nExecStart=/n\\n"}
`);
    const a = assess(after, "rules:\n- units: [sshd.service, new.service, old.service]\n  action: none\n");
    expect(actions(a)).toEqual(["sshd.service=stop", "new.service=restart", "old.service=stop"]);
    expect(a.units.map((u) => u.why)).toEqual(["unit stopped or disabled", "new unit", "unit removed"]);
  });

  test("an in-place step is disruptive", () => {
    const changes = computeChanges(before, before, "c1", "host");
    changes.inPlaceUpdates.operatingSystem = true;
    const a = assessDisruption({ changes, osc: before, lastApplied: before, policy: undefined });
    expect(a).toEqual({ disruptive: true, units: [], inPlace: ["operating system update"] });
  });

  test("a change of the policy file itself restarts nothing", () => {
    const policyFile = "/var/lib/gardener-node-agent/disruption-policy.yaml";
    const mk = (rules: string) =>
      osc(`
spec:
  files:
  - {path: ${policyFile}, content: {inline: {data: "${rules}"}}}
  units:
  - {name: watcher.service, content: "[Service]\\nExecStart=/w\\n", filePaths: [${policyFile}]}
`);
    const a = mk("rules: []");
    const b = mk("rules: [] # new");
    const out = assessDisruption({ changes: computeChanges(a, b, "c2", "host"), osc: b, lastApplied: a, policy: { rules: [] } });
    expect(out.units.map((u) => u.action)).toEqual(["none"]);
    expect(out.disruptive).toBe(false);
  });
});

describe("assessDisruption and containerd", () => {
  const cri = "  criConfig: {name: containerd, containerd: {sandboxImage: pause:3.9}}\n";
  const withCri = (sandbox: string) => osc(`spec:\n${cri.replace("pause:3.9", sandbox)}  units: []\n`);
  const policy = parseDisruptionPolicy("rules:\n- units: [containerd.service]\n  action: none\n");

  test("on the first apply containerd is started whatever the policy says", () => {
    const first = withCri("pause:3.9");
    const a = assessDisruption({ changes: computeChanges(undefined, first, "c1", "host"), osc: first, lastApplied: undefined, policy });
    expect(a.units.map((u) => `${u.unit}=${u.action}:${u.why}`)).toEqual(["containerd.service=restart:new unit"]);
  });
});
