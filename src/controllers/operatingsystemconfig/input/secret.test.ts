import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../../kube/index.ts";
import { bigTextChars } from "../../../text/index.ts";
import { secretPredicate } from "../watch.ts";
import { decodeSecret, oscSecretTransform } from "./secret.ts";

const key = { namespace: "kube-system", name: "osc-secret" };
const oscYaml = (unit: string) => `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  units:
  - name: ${unit}.service
    content: "[Service]"
`;
const secret = (data: Record<string, string>, name = key.name): KubeObject => ({
  metadata: { namespace: key.namespace, name, resourceVersion: "1", annotations: { "checksum/data-script": "c" } },
  data,
});
const transform = oscSecretTransform(key.name);

describe("oscSecretTransform", () => {
  test("should keep the decoded OSC instead of the base64 text, and every other data key and the metadata", () => {
    const obj = transform(secret({ "osc.yaml": btoa(oscYaml("a")), other: "eA==" }));
    expect(obj["data"]).toEqual({ other: "eA==" });
    expect(obj.metadata.annotations).toEqual({ "checksum/data-script": "c" });
    expect(decodeSecret(obj, key).spec.units?.map((u) => u.name)).toEqual(["a.service"]);
  });

  test("should let the watch predicate tell a changed osc.yaml from an unchanged one", () => {
    const a = transform(secret({ "osc.yaml": btoa(oscYaml("a")) }));
    const sameBytes = transform(secret({ "osc.yaml": btoa(oscYaml("a")) }));
    const b = transform(secret({ "osc.yaml": btoa(oscYaml("b")) }));
    expect(secretPredicate.update(a, sameBytes)).toBe(false);
    expect(secretPredicate.update(a, b)).toBe(true);
  });

  test("should keep why a Secret cannot be decoded for its reconcile, naming the Secret and not the data", () => {
    const notBase64 = transform(secret({ "osc.yaml": "!!!secret-ish" }));
    expect(() => decodeSecret(notBase64, key)).toThrow("invalid osc.yaml data in secret kube-system/osc-secret");
    const notYaml = transform(secret({ "osc.yaml": btoa("kind: Pod\n") }));
    expect(() => decodeSecret(notYaml, key)).toThrow("failed decoding osc.yaml of secret kube-system/osc-secret");
    expect(secretPredicate.update(notBase64, transform(secret({ "osc.yaml": "!!!other" })))).toBe(true);
  });

  test("should leave other Secrets and a Secret without osc.yaml as they are", () => {
    const other = secret({ "osc.yaml": btoa(oscYaml("a")) }, "another-pool");
    expect(transform(other)["data"]).toEqual({ "osc.yaml": btoa(oscYaml("a")) });
    const empty = transform(secret({}));
    expect(() => decodeSecret(empty, key)).toThrow("no osc.yaml key found in secret kube-system/osc-secret");
  });

  test("should take a big osc.yaml (past bigTextChars) at once and parse it on first use, once", () => {
    // A YAML comment pads the text past 4 MiB of base64.
    const big = (unit: string) => btoa(`${oscYaml(unit)}# ${"x".repeat(3_200_000)}\n`);
    expect(big("a").length).toBeGreaterThan(bigTextChars);
    const a = transform(secret({ "osc.yaml": big("a") }));
    expect(a["data"]).toEqual({});
    expect(secretPredicate.update(a, transform(secret({ "osc.yaml": big("a") })))).toBe(false);
    expect(secretPredicate.update(a, transform(secret({ "osc.yaml": big("b") })))).toBe(true);
    const osc = decodeSecret(a, key);
    expect(osc.spec.units?.map((u) => u.name)).toEqual(["a.service"]);
    expect(decodeSecret(a, key)).toBe(osc);
    const notYaml = transform(secret({ "osc.yaml": btoa(`kind: Pod\n# ${"x".repeat(3_200_000)}\n`) }));
    expect(() => decodeSecret(notYaml, key)).toThrow("failed decoding osc.yaml of secret kube-system/osc-secret");
  });

  test("should take a big osc.yaml the watch delivered as its bytes (dataAsBytes) as it takes its text", () => {
    const bytes = (unit: string) => new TextEncoder().encode(`${oscYaml(unit)}# ${"x".repeat(3_200_000)}\n`);
    const fromText = transform(secret({ "osc.yaml": Buffer.from(bytes("a")).toString("base64") }));
    const asBytes = (unit: string) => {
      const obj = secret({});
      obj["data"] = { "osc.yaml": bytes(unit), other: "eA==" };
      return transform(obj);
    };
    const a = asBytes("a");
    expect(a["data"]).toEqual({ other: "eA==" });
    expect(secretPredicate.update(fromText, a)).toBe(false);
    expect(secretPredicate.update(a, asBytes("b"))).toBe(true);
    expect(decodeSecret(a, key).spec.units?.map((u) => u.name)).toEqual(["a.service"]);
    // Only this Secret's osc.yaml is asked for as bytes: other keys and other pools' Secrets stay text.
    expect(transform.dataAsBytes?.(a, "osc.yaml")).toBe(true);
    expect(transform.dataAsBytes?.(a, "other")).toBe(false);
    expect(transform.dataAsBytes?.(secret({}, "another-pool"), "osc.yaml")).toBe(false);
  });

  test("should decode a Secret read without the transform (a live GET) as before", () => {
    expect(decodeSecret(secret({ "osc.yaml": btoa(oscYaml("c")) }), key).spec.units?.[0]?.name).toBe("c.service");
  });
});
