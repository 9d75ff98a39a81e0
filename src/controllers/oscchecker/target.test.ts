import { describe, expect, test } from "bun:test";
import { ApiError } from "../../kube/index.ts";
import type { KubeObject, Reader } from "../../kube/index.ts";
import { secretTargetOsc } from "./target.ts";

const readerOf = (secret: KubeObject | undefined): Reader => ({
  get: async <T extends KubeObject>(_res: unknown, namespace: string, name: string) => {
    if (secret === undefined || namespace !== "kube-system" || name !== "osc-secret") throw new ApiError(404, "NotFound", "not found");
    return secret as T;
  },
  list: () => Promise.reject(new Error("unused")),
});

const secretWith = (data: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "osc-secret", namespace: "kube-system" },
  data,
});

describe("secretTargetOsc", () => {
  test("should read files and units of the Secret's osc.yaml, extension files and units included", async () => {
    const yaml = `spec:
  files:
  - {path: /etc/a, content: {inline: {encoding: b64, data: YQ==}}}
  units:
  - {name: a.service, enable: true, content: x, dropIns: [{name: 10.conf, content: d}]}
status:
  extensionFiles:
  - {path: /etc/img, content: {imageRef: {image: i, filePathInImage: /f}}}
`;
    const read = secretTargetOsc(readerOf(secretWith({ "osc.yaml": btoa(yaml) })), "osc-secret");
    expect(await read(new AbortController().signal)).toEqual({
      files: [
        { path: "/etc/a", inline: { encoding: "b64", data: "YQ==" }, hasImageRef: false },
        { path: "/etc/img", inline: undefined, hasImageRef: true },
      ],
      units: [{ name: "a.service", enable: true, content: "x", dropIns: [{ name: "10.conf", content: "d" }], filePaths: [] }],
    });
  });

  test.each([
    ["no Secret", undefined],
    ["no osc.yaml", secretWith({ other: "eA==" })],
    ["osc.yaml that is not base64", secretWith({ "osc.yaml": "!!" })],
    ["osc.yaml that is not an OSC", secretWith({ "osc.yaml": btoa("spec: [") })],
  ])("should have no target with %s", async (_what, secret) => {
    expect(await secretTargetOsc(readerOf(secret), "osc-secret")(new AbortController().signal)).toBeUndefined();
  });
});
