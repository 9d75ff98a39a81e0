import { describe, expect, test } from "bun:test";
import type { Osc } from "../../../osc/index.ts";
import { injectEnvDropIn } from "./env-dropin.ts";

describe("injectEnvDropIn", () => {
  const base = (units: Osc["spec"]["units"]): Osc => ({
    apiVersion: "a",
    kind: "k",
    spec: { type: "", purpose: "", ...(units ? { units } : {}) },
    status: {},
  });
  const content = '[Service]\nEnvironment="PATH=/var/bin/containerruntimes:/usr/bin:/bin"\n';

  test("should append to the first containerd.service spec unit", () => {
    const osc = injectEnvDropIn(
      base([{ name: "a" }, { name: "containerd.service", dropIns: [{ name: "x", content: "y" }] }, { name: "containerd.service" }]),
      "/usr/bin:/bin",
    );
    expect(osc.spec.units?.[1]?.dropIns).toEqual([
      { name: "x", content: "y" },
      { name: "30-env_config.conf", content },
    ]);
    expect(osc.spec.units?.[2]?.dropIns).toBeUndefined();
  });

  test("should add a containerd.service unit when there is none", () => {
    const osc = injectEnvDropIn(base(undefined), "/usr/bin:/bin");
    expect(osc.spec.units).toEqual([{ name: "containerd.service", dropIns: [{ name: "30-env_config.conf", content }] }]);
  });
});
