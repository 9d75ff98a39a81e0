import { describe, expect, test } from "bun:test";
import type { Kube } from "../../../../kube/index.ts";
import { decodeOsc } from "../../../../osc/index.ts";
import { decodeStaticPod, desiredStaticPods, StaticPodManifestError } from "./manifests.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: foo\n  annotations:\n    gardener.cloud/config.mirror: abc\n";

describe("decodeStaticPod", () => {
  test("should return the name and config hash of a Pod", () => {
    expect(decodeStaticPod("/etc/kubernetes/manifests/a.yaml", enc(pod))).toEqual({ name: "foo", hash: "abc" });
    expect(decodeStaticPod("/p", enc('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"j"}}'))).toEqual({ name: "j", hash: "" });
  });
  test.each([
    ["unparsable content", "{", 'static pod manifest "/p": cannot be decoded'],
    ["a scalar", "hello", 'static pod manifest "/p": cannot be decoded: not an object'],
    [
      "another kind",
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
      'static pod manifest "/p": is not a Pod (apiVersion "v1", kind "ConfigMap")',
    ],
    ["no kind", "apiVersion: v1\nmetadata: {name: x}\n", 'static pod manifest "/p": is not a Pod (apiVersion "v1", kind "")'],
    ["no name", "apiVersion: v1\nkind: Pod\n", 'static pod manifest "/p": has no metadata.name'],
  ])("should reject %s with a StaticPodManifestError naming the path", (_name, text, message) => {
    let caught: unknown;
    try {
      decodeStaticPod("/p", enc(text));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(StaticPodManifestError);
    expect((caught as Error).message).toBe(message);
  });
});

describe("desiredStaticPods", () => {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  const osc = decodeOsc(`apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  files:
  - path: /etc/kubernetes/manifests/kube-apiserver.yaml
    content: {inline: {encoding: b64, data: ${b64(pod)}}}
  - path: /etc/kubernetes/manifests/other-host.yaml
    hostName: some-other-hostname
    content: {inline: {data: "{"}}
  - path: /etc/kubernetes/manifests/from-image.yaml
    content: {imageRef: {image: "example.org/x:1", filePathInImage: /x}}
  - path: /etc/other/file
    content: {inline: {data: "{"}}
status:
  extensionFiles:
  - path: /etc/kubernetes/manifests/etcd.yaml
    content: {inline: {data: "apiVersion: v1\\nkind: Pod\\nmetadata: {name: etcd, annotations: {gardener.cloud/config.mirror: e1}}\\n"}}
`);
  const noKube = {} as Kube; // no secretRef files: the client is never used
  test("should map this host's manifests by pod name, ignoring other hosts, imageRefs and other paths", async () => {
    const got = await desiredStaticPods(noKube, osc, "my-host", new AbortController().signal);
    expect([...got]).toEqual([
      ["foo", "abc"],
      ["etcd", "e1"],
    ]);
  });
});
