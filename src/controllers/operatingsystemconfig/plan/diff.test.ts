import { describe, expect, test } from "bun:test";
import { decodeOsc, digestOsc, emptyChanges, type Osc } from "../../../osc/index.ts";
import { computeChanges, computeContainerdDiff, computeFileDiff, computeUnitDiff, resumeOrCompute } from "./diff.ts";

const osc = (src: string): Osc => decodeOsc(src);
const names = (xs: readonly { name: string }[]) => xs.map((x) => x.name);
const paths = (xs: readonly { path: string }[]) => xs.map((x) => x.path);

describe("computeFileDiff", () => {
  const base = `
spec:
  files:
  - {path: /a, permissions: 420, content: {inline: {data: a}}}
  - {path: /b, content: {inline: {data: b}}}
  - {path: /other, hostName: other, content: {inline: {data: o}}}
status:
  extensionFiles:
  - {path: /c, content: {secretRef: {name: s, dataKey: k}}}
`;
  test.each([
    ["first apply changes every file of this host", undefined, base, ["/a", "/b", "/c"], []],
    ["identical OSC changes nothing", base, base, [], []],
    ["a changed permission changes the file", base, base.replace("permissions: 420", "permissions: 384"), ["/a"], []],
    [
      "removed files are deleted",
      base,
      "spec:\n  files:\n  - {path: /a, permissions: 420, content: {inline: {data: a}}}\n",
      [],
      ["/b", "/c"],
    ],
    [
      "moving between spec and status is no change",
      base,
      "spec:\n  files:\n  - {path: /a, permissions: 420, content: {inline: {data: a}}}\n  - {path: /c, content: {secretRef: {name: s, dataKey: k}}}\nstatus:\n  extensionFiles:\n  - {path: /b, content: {inline: {data: b}}}\n",
      [],
      [],
    ],
    ["another host's file is neither changed nor deleted", base, base.replace("data: o", "data: o2"), [], []],
    [
      "transmitUnencoded takes part in equality",
      base,
      base.replace("{inline: {data: b}}", "{inline: {data: b}, transmitUnencoded: true}"),
      ["/b"],
      [],
    ],
    ["a changed inline content changes the file", base, base.replace("data: b}", "data: b2}"), ["/b"], []],
    ["a changed inline encoding changes the file", base, base.replace("data: b}", "data: b, encoding: b64}"), ["/b"], []],
  ])("%s", (_name, oldSrc, newSrc, changed, deleted) => {
    const d = computeFileDiff(oldSrc === undefined ? undefined : osc(oldSrc), osc(newSrc), "me");
    expect(paths(d.changed)).toEqual(changed);
    expect(paths(d.deleted)).toEqual(deleted);
    // A big last-applied OSC is held as digests (shared/last-applied.ts): the same files change.
    const digested = computeFileDiff(oldSrc === undefined ? undefined : digestOsc(osc(oldSrc)), osc(newSrc), "me");
    expect(paths(digested.changed)).toEqual(changed);
    expect(paths(digested.deleted)).toEqual(deleted);
  });
});

describe("computeUnitDiff", () => {
  const base = `
spec:
  units:
  - {name: a.service, content: "#a", dropIns: [{name: d1, content: x}, {name: d2, content: y}]}
  - {name: b.service, enable: false, content: "#b"}
  - {name: c.service, filePaths: [/f]}
`;
  test("first apply: every unit changed with all drop-ins and a command", () => {
    const d = computeUnitDiff(undefined, osc(base), []);
    expect(names(d.changed)).toEqual(["a.service", "b.service", "c.service"]);
    expect(d.changed[0]?.dropInsChanges.changed).toHaveLength(2);
    expect(d.commands).toEqual([
      { name: "a.service", command: "restart" },
      { name: "b.service", command: "stop" },
      { name: "c.service", command: "restart" },
    ]);
    expect(d.deleted).toEqual([]);
  });

  test.each([
    ["nothing changed", base, [], [], [], [], []],
    ["a referenced file changed", base, ["/f"], ["c.service"], [], [], []],
    ["a drop-in removed", base.replace(", {name: d2, content: y}", ""), [], ["a.service"], [], ["d2"], []],
    ["a drop-in content changed", base.replace("content: y", "content: z"), [], ["a.service"], ["d2"], [], []],
    ["a unit removed", base.replace('  - {name: b.service, enable: false, content: "#b"}\n', ""), [], [], [], [], ["b.service"]],
    ["enable flipped", base.replace("enable: false", "enable: true"), [], ["b.service"], [], [], []],
    ["empty dropIns equal absent", base.replace("filePaths: [/f]", "filePaths: [/f], dropIns: []"), [], [], [], [], []],
  ])("%s", (_name, newSrc, changedFiles, changed, dropChanged, dropDeleted, deleted) => {
    const d = computeUnitDiff(
      osc(base),
      osc(newSrc),
      changedFiles.map((p) => ({ path: p, content: {} })),
    );
    expect(names(d.changed)).toEqual(changed);
    expect(names(d.commands)).toEqual(changed);
    expect(names(d.deleted)).toEqual(deleted);
    expect(d.changed.flatMap((u) => names(u.dropInsChanges.changed))).toEqual(dropChanged);
    expect(d.changed.flatMap((u) => names(u.dropInsChanges.deleted))).toEqual(dropDeleted);
  });
});

describe("computeContainerdDiff", () => {
  const cri = (extra: string) => `
spec:
  criConfig:
    name: containerd
    cgroupDriver: systemd
    containerd:
      sandboxImage: pause:1
      registries:
      - {upstream: a, server: https://a, readinessProbe: true}
      - {upstream: b, server: https://b}
${extra}`;
  test.each([
    ["first apply without containerd still marks the config changed", undefined, "spec: {}", true, [], [], []],
    ["first apply lists every registry and probes probe-enabled ones", undefined, cri(""), true, ["a", "b"], [], ["a"]],
    ["unchanged config rewrites all registries but probes none", cri(""), cri(""), false, ["a", "b"], [], []],
    ["sandbox image change marks config changed", cri(""), cri("").replace("pause:1", "pause:2"), true, ["a", "b"], [], []],
    ["cgroup driver change marks config changed", cri(""), cri("").replace("systemd", "cgroupfs"), true, ["a", "b"], [], []],
    [
      "plugin change marks config changed",
      cri(""),
      cri("").replace("      registries:", "      plugins: [{path: [x]}]\n      registries:"),
      true,
      ["a", "b"],
      [],
      [],
    ],
    [
      "registry removed is deleted without config change",
      cri(""),
      cri("").replace("      - {upstream: b, server: https://b}\n", ""),
      false,
      ["a"],
      ["b"],
      [],
    ],
    ["changed probe-enabled registry is probed", cri(""), cri("").replace("https://a", "https://a2"), false, ["a", "b"], [], ["a"]],
    ["containerd newly configured marks config changed", "spec: {}", cri(""), true, ["a", "b"], [], ["a"]],
    ["containerd no longer configured does nothing", cri(""), "spec: {}", false, [], [], []],
  ])("%s", (_name, oldSrc, newSrc, cfg, desired, deleted, probe) => {
    const d = computeContainerdDiff(oldSrc === undefined ? undefined : osc(oldSrc), osc(newSrc));
    expect(d.configFileChanged).toBe(cfg);
    expect(d.registries.desired.map((r) => r.upstream)).toEqual(desired);
    expect(d.registries.deleted.map((r) => r.upstream)).toEqual(deleted);
    expect(d.registries.upstreamsToProbe).toEqual(probe);
  });
});

describe("resumeOrCompute", () => {
  const cur = osc("spec:\n  units: [{name: a}]\n");
  test("should resume a change set of the same checksum as-is", () => {
    const persisted = emptyChanges("sum1");
    const r = resumeOrCompute(persisted, undefined, cur, "sum1", "me");
    expect(r.resumed).toBe(true);
    expect(r.changes).toBe(persisted);
  });
  test("should recompute for another checksum", () => {
    const r = resumeOrCompute(emptyChanges("old"), undefined, cur, "sum2", "me");
    expect(r.resumed).toBe(false);
    expect(r.changes.operatingSystemConfigChecksum).toBe("sum2");
    expect(names(r.changes.units.changed)).toEqual(["a"]);
  });
  test("should compute when nothing was persisted", () => {
    expect(computeChanges(undefined, cur, "s", "me").containerd.configFileChanged).toBe(true);
    expect(resumeOrCompute(undefined, cur, cur, "s", "me").changes.units.changed).toEqual([]);
  });
});
