import { describe, expect, test } from "bun:test";
import { LastAppliedParseError, parseLastApplied } from "./last-applied.ts";

describe("parseLastApplied", () => {
  test("should not see dropIns, filePaths or imageRef in a file written with JSON field names", () => {
    const osc = parseLastApplied(`apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  files:
  - path: /opt/bin/gardener-node-agent
    permissions: 0755
    content:
      imageRef:
        image: registry/agent:v1
        filePathInImage: /gardener-node-agent
  units:
  - name: gardener-node-agent.service
    enable: true
    content: "[Unit]"
    dropIns:
    - name: 10-x.conf
      content: x
    filePaths:
    - /opt/bin/gardener-node-agent
status:
  extensionFiles:
  - path: /etc/ext
    content:
      inline:
        data: ext
`);
    expect(osc).toEqual({
      files: [{ path: "/opt/bin/gardener-node-agent", inline: undefined, hasImageRef: false }],
      units: [{ name: "gardener-node-agent.service", enable: true, content: "[Unit]", dropIns: [], filePaths: [] }],
    });
  });

  test("should read drop-ins, dependencies and image references under the lower-cased keys", () => {
    const osc = parseLastApplied(`spec:
  files:
  - path: /a
    content:
      imageref: {image: x}
      inline: {encoding: b64, data: YQ==}
  units:
  - name: test.service
    dropins:
    - name: 10-override.conf
      content: drop
    filepaths: [/etc/dep]
`);
    expect(osc.files).toEqual([{ path: "/a", inline: { encoding: "b64", data: "YQ==" }, hasImageRef: true }]);
    expect(osc.units).toEqual([
      {
        name: "test.service",
        enable: undefined,
        content: undefined,
        dropIns: [{ name: "10-override.conf", content: "drop" }],
        filePaths: ["/etc/dep"],
      },
    ]);
  });

  test.each([
    ["yes", true],
    ["off", false],
    ["false", false],
  ])("should read enable: %s as YAML 1.1 does for a boolean field", (text, want) => {
    expect(parseLastApplied(`spec:\n  units:\n  - name: u\n    enable: ${text}\n`).units[0]?.enable).toBe(want);
  });

  test.each([
    ["an empty document", ""],
    ["a document without spec", "kind: OperatingSystemConfig\n"],
    ["null lists", "spec:\n  files: null\n  units: ~\n"],
  ])("should yield no files and no units for %s", (_what, text) => {
    expect(parseLastApplied(text)).toEqual({ files: [], units: [] });
  });

  test.each([
    ["invalid YAML", "spec: [unclosed"],
    ["a scalar document", "just text"],
    ["files that are not a list", "spec:\n  files: {path: /a}\n"],
    ["an enable that is not a boolean", "spec:\n  units:\n  - name: u\n    enable: sometimes\n"],
  ])("should reject %s with a parse error", (_what, text) => {
    expect(() => parseLastApplied(text)).toThrow(LastAppliedParseError);
    expect(() => parseLastApplied(text)).toThrow(/^cannot parse OSC YAML: /);
  });
});
