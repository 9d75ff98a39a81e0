import { describe, expect, test } from "bun:test";
import { decodeOsc } from "../../../osc/index.ts";
import { allFiles, containerdConfigured, mergeUnits, unitCommand } from "./merge.ts";

const plain = (x: unknown) => JSON.parse(JSON.stringify(x));

describe("mergeUnits", () => {
  test("should override enable/command/content and append dropIns and filePaths of later entries", () => {
    const osc = decodeOsc(`
spec:
  units:
  - name: a
    enable: true
    command: start
    content: "#a"
    dropIns: [{name: d1, content: x}]
  - name: b
    content: "#b"
  - name: a
    dropIns: [{name: d2, content: y}]
status:
  extensionUnits:
  - name: a
    enable: false
    filePaths: [/f]
  - name: c
`);
    expect(plain(mergeUnits(osc))).toEqual([
      {
        name: "a",
        enable: false,
        command: "start",
        content: "#a",
        dropIns: [
          { name: "d1", content: "x" },
          { name: "d2", content: "y" },
        ],
        filePaths: ["/f"],
      },
      { name: "b", content: "#b" },
      { name: "c" },
    ]);
  });
});

describe("allFiles", () => {
  test("should keep files without hostName and those for this host, spec first", () => {
    const osc = decodeOsc(`
spec:
  files:
  - {path: /a}
  - {path: /b, hostName: other}
status:
  extensionFiles:
  - {path: /c, hostName: me}
  - {path: /d}
`);
    expect(allFiles(osc, "me").map((f) => f.path)).toEqual(["/a", "/c", "/d"]);
  });
});

describe("unitCommand", () => {
  test.each([
    [{ name: "u" }, "restart"],
    [{ name: "u", command: "start" }, "restart"],
    [{ name: "u", command: "restart" }, "restart"],
    [{ name: "u", command: "stop" }, "stop"],
    [{ name: "u", enable: false, command: "start" }, "stop"],
    [{ name: "u", enable: true }, "restart"],
  ])("should map %p to %p", (u, want) => {
    expect(unitCommand(u)).toBe(want as "stop" | "restart");
  });
});

describe("containerdConfigured", () => {
  test.each([
    ["spec: {}", false],
    ["spec: {criConfig: {name: containerd}}", false],
    ["spec: {criConfig: {name: docker, containerd: {}}}", false],
    ["spec: {criConfig: {name: containerd, containerd: {sandboxImage: x}}}", true],
  ])("should say %p → %p", (src, want) => {
    expect(containerdConfigured(decodeOsc(src))).toBe(want);
  });
});
