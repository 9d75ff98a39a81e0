import { describe, expect, test } from "bun:test";
import { FakeClock } from "../../../../test/doubles/fake-clock.ts";
import { secrets, type KubeObject } from "../../../kube/index.ts";
import { bigTextChars } from "../../../text/index.ts";
import { secretPredicate } from "../watch.ts";
import { decodeSecret, OscSecretDropped, oscSecretTransform, readSecretAgain } from "./secret.ts";
import { useAdminSim } from "../../../../test/harness/admin-kube.ts";

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

  test("should parse a small osc.yaml on first use too (in the reconcile, beside the Node GET), once", () => {
    const notYaml = transform(secret({ "osc.yaml": btoa("kind: Pod\n") }));
    // The transform takes the bytes without parsing them: what they hold shows at the first decode.
    expect(notYaml["data"]).toEqual({});
    expect(() => decodeSecret(notYaml, key)).toThrow("failed decoding osc.yaml of secret kube-system/osc-secret");
    const a = transform(secret({ "osc.yaml": btoa(oscYaml("a")) }));
    const osc = decodeSecret(a, key);
    expect(osc.spec.units?.map((u) => u.name)).toEqual(["a.service"]);
    expect(decodeSecret(a, key)).toBe(osc);
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

describe("a big event arriving for the cached Secret (bigEventArriving)", () => {
  const env = useAdminSim({ bookmarkIntervalMs: 0 });
  const signal = new AbortController().signal;
  const stored = (unit: string): KubeObject => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { namespace: key.namespace, name: key.name, annotations: { "checksum/data-script": unit } },
    data: { "osc.yaml": btoa(oscYaml(unit)) },
  });
  const units = (obj: KubeObject) => decodeSecret(obj, key).spec.units?.map((u) => u.name);

  /** The informer's cache as readSecret sees it: one object, replaced by what the transform took. */
  const cache = (clock: FakeClock) => {
    const c = { current: undefined as KubeObject | undefined, clock, kube: env.kube, readSecret: async () => c.current };
    return c;
  };
  const read = () => env.kube.get<KubeObject>(secrets, key.namespace, key.name);
  /** readSecretAgain with no decode of its own: the Secret it found. */
  const reread = async (deps: ReturnType<typeof cache>, dropped: KubeObject) =>
    (await readSecretAgain(deps, dropped, key, signal, () => undefined))?.secret;
  /** The stored version as the informer caches it: the transform's object, the one `deps` reads (`clock` times its waits). */
  const cachedVersion = async (clock = new FakeClock()) => {
    const ownTransform = oscSecretTransform(key.name);
    const deps = cache(clock);
    const cached = ownTransform(await read());
    deps.current = cached;
    return { ownTransform, deps, cached };
  };

  test("should let go of the cached version's OSC, keep what the predicate compares, and take the arriving version from the cache", async () => {
    await env.kube.create<KubeObject>(secrets, key.namespace, stored("a"));
    const { ownTransform, deps, cached } = await cachedVersion();
    expect(units(cached)).toEqual(["a.service"]);

    ownTransform.bigEventArriving?.();
    expect(() => decodeSecret(cached, key)).toThrow(OscSecretDropped);
    await env.kube.update<KubeObject>(secrets, key.namespace, stored("b"));
    const event = await read();
    const again = reread(deps, cached);
    // Gone from the server before the event lands: what readSecretAgain returns can only come from the cache.
    await env.kube.delete(secrets, key.namespace, key.name);
    deps.current = ownTransform(event);
    expect(secretPredicate.update(cached, deps.current)).toBe(true);
    const arrived = await again;
    expect(arrived).toBe(deps.current);
    expect(arrived === undefined ? undefined : units(arrived)).toEqual(["b.service"]);
  });

  test("should read the Secret from the server when the event was another's, and give the cached version its OSC back", async () => {
    await env.kube.create<KubeObject>(secrets, key.namespace, stored("a"));
    const { ownTransform, deps, cached } = await cachedVersion();
    ownTransform.bigEventArriving?.();
    ownTransform(secret({ "osc.yaml": btoa(oscYaml("x")) }, "another-pool"));
    expect(secretPredicate.update(cached, ownTransform(await read()))).toBe(false);
    expect(await reread(deps, cached)).toBe(cached);
    expect(units(cached)).toEqual(["a.service"]); // the next reconcile needs no GET
    await env.kube.delete(secrets, key.namespace, key.name);
  });

  test("should wait for the arriving event at most 30 s, then read the Secret from the server", async () => {
    await env.kube.create<KubeObject>(secrets, key.namespace, stored("a"));
    const clock = new FakeClock();
    const { ownTransform, deps, cached } = await cachedVersion(clock);
    ownTransform.bigEventArriving?.();
    await env.kube.update<KubeObject>(secrets, key.namespace, stored("b"));
    let done = false;
    const again = reread(deps, cached).finally(() => {
      done = true;
    });
    await clock.waitForSleepers();
    clock.step(29_999);
    await clock.settle();
    expect(done).toBe(false);
    clock.step(1);
    const live = await again;
    expect(live).not.toBe(cached);
    expect(live === undefined ? undefined : units(live)).toEqual(["b.service"]);
    expect(() => decodeSecret(cached, key)).toThrow(OscSecretDropped); // a newer version: the informer brings it
    // Deleted meanwhile (the informer's DELETED event is the next it takes): no Secret.
    await env.kube.delete(secrets, key.namespace, key.name);
    deps.current = undefined;
    ownTransform(live ?? cached);
    expect(await reread(deps, cached)).toBeUndefined();
  });

  test("should decode what it found before a next big event can drop it, however late that event starts", async () => {
    await env.kube.create<KubeObject>(secrets, key.namespace, stored("a"));
    // The next big event starts k microtasks after the cache answered (a watch read resumed in between):
    // early enough, the found version is dropped before the check (a live GET); later, after `use` decoded it.
    for (let k = 0; k <= 12; k++) {
      const { ownTransform, deps, cached } = await cachedVersion();
      ownTransform.bigEventArriving?.();
      const arriving = ownTransform(await read());
      deps.readSecret = async () => {
        let hops = Promise.resolve();
        for (let i = 0; i < k; i++) hops = hops.then(() => undefined);
        void hops.then(() => ownTransform.bigEventArriving?.());
        return arriving;
      };
      const found = await readSecretAgain(deps, cached, key, signal, (s) => units(s));
      expect({ k, used: found?.used }).toEqual({ k, used: ["a.service"] });
    }
    await env.kube.delete(secrets, key.namespace, key.name);
    // 26 drops, each a full collection of this test process's heap (≈ 0.8 s idle; it passed 5 s at load 9).
  }, 30_000);

  test("should leave other pools' Secrets and a transform that took no object alone", () => {
    const ownTransform = oscSecretTransform(key.name);
    ownTransform.bigEventArriving?.();
    const other = ownTransform(secret({ "osc.yaml": btoa(oscYaml("a")) }, "another-pool"));
    ownTransform.bigEventArriving?.();
    expect(other["data"]).toEqual({ "osc.yaml": btoa(oscYaml("a")) });
    expect(decodeSecret(other, key).spec.units?.map((u) => u.name)).toEqual(["a.service"]);
  });
});
