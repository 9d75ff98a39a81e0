import { describe, expect, test } from "bun:test";
import { parse } from "smol-toml";
import type { CriConfig } from "../../../../osc/index.ts";
import { configVersion, parseContainerdVersion, patchContainerdConfig } from "./config-toml.ts";
import { ContainerdConfigError } from "./errors.ts";

const cri = (extra: Partial<NonNullable<CriConfig["containerd"]>> = {}, cgroupDriver: string | null = "systemd"): CriConfig => ({
  name: "containerd",
  ...(cgroupDriver !== null ? { cgroupDriver } : {}),
  containerd: { sandboxImage: "registry.k8s.io/pause:latest", ...extra },
});

type T = Record<string, any>;
const patch = (text: string, c: CriConfig = cri(), v: [number, number] = [1, 7]): T => parse(patchContainerdConfig(text, c, v)) as T;

describe("patchContainerdConfig", () => {
  test.each([[""], ["version = 2\n"]])("should patch the v1/v2 paths for %p", (src) => {
    const d = patch(src);
    const c = d["plugins"]["io.containerd.grpc.v1.cri"];
    expect(d["imports"]).toEqual(["/etc/containerd/conf.d/*.toml"]);
    expect(c["sandbox_image"]).toBe("registry.k8s.io/pause:latest");
    expect(c["registry"]["config_path"]).toBe("/etc/containerd/certs.d");
    expect(c["cni"]["bin_dir"]).toBe("/opt/cni/bin");
    expect(c["containerd"]["runtimes"]["runc"]["options"]["SystemdCgroup"]).toBe(true);
  });

  test.each([["version = 3\n"], ["version = 4\n"]])("should patch the v3/v4 paths for %p with containerd < 2.2", (src) => {
    const d = patch(src, cri(), [2, 1]);
    expect(d["plugins"]["io.containerd.cri.v1.images"]["pinned_images"]["sandbox"]).toBe("registry.k8s.io/pause:latest");
    expect(d["plugins"]["io.containerd.cri.v1.images"]["registry"]["config_path"]).toBe("/etc/containerd/certs.d");
    expect(d["plugins"]["io.containerd.cri.v1.runtime"]["cni"]["bin_dir"]).toBe("/opt/cni/bin");
    expect(d["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]["runtimes"]["runc"]["options"]["SystemdCgroup"]).toBe(true);
    expect(d["plugins"]["io.containerd.grpc.v1.cri"]).toBeUndefined();
  });

  test.each([["version = 3\n"], ["version = 4\n"]])("should use bin_dirs and drop bin_dir for %p with containerd >= 2.2", (src) => {
    const d = patch(`${src}[plugins."io.containerd.cri.v1.runtime".cni]\nbin_dir = "/old"\n`, cri(), [2, 2]);
    expect(d["plugins"]["io.containerd.cri.v1.runtime"]["cni"]).toEqual({ bin_dirs: ["/opt/cni/bin"] });
  });

  test("should use bin_dir for a v2 file even with containerd 2.2", () => {
    expect(patch("version = 2\n", cri(), [2, 2])["plugins"]["io.containerd.grpc.v1.cri"]["cni"]["bin_dir"]).toBe("/opt/cni/bin");
  });

  test.each([
    ["cgroupfs", false],
    ["systemd", true],
  ])("should set SystemdCgroup for driver %p to %p", (drv, want) => {
    expect(
      patch("version = 2\n", cri({}, drv))["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["runc"]["options"][
        "SystemdCgroup"
      ],
    ).toBe(want);
  });

  test("should leave SystemdCgroup alone without a cgroup driver", () => {
    expect(patch("version = 2\n", cri({}, null))["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]).toBeUndefined();
  });

  test.each([
    ['imports = ["/a.toml"]\n', ["/a.toml", "/etc/containerd/conf.d/*.toml"]],
    ['imports = ["/etc/containerd/conf.d/*.toml"]\n', ["/etc/containerd/conf.d/*.toml"]],
    ['imports = "x"\n', ["/etc/containerd/conf.d/*.toml"]],
  ])("should merge imports of %p", (src, want) => {
    expect(patch(src)["imports"]).toEqual(want);
  });

  test("should add, merge and remove plugin tables in order", () => {
    const d = patch(
      "[plugins.foo.bar]\nold = 1\nsomeKey2 = 0\n",
      cri({
        plugins: [
          { path: ["foo", "bar", "foo.bar"], values: { someKey: "someValue" } },
          { path: ["foo", "bar"], values: { someKey2: "someValue2" } },
          { path: ["bar"] },
        ],
      }),
    );
    expect(d["plugins"]["foo"]).toEqual({ bar: { old: 1, someKey2: "someValue2", "foo.bar": { someKey: "someValue" } } });
    expect(d["plugins"]["bar"]).toEqual({});
    expect(patch("", cri({ plugins: [{ path: ["foo", "bar"] }, { op: "remove", path: ["foo"] }] }))["plugins"]["foo"]).toBeUndefined();
  });

  test("should translate the runtimes plugin path for v3/v4 only", () => {
    const p = { path: ["io.containerd.grpc.v1.cri", "containerd", "runtimes", "kata"], values: { runtime_type: "k" } };
    const v3 = patch("version = 3\n", cri({ plugins: [p] }), [2, 0]);
    expect(v3["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]["runtimes"]["kata"]).toEqual({ runtime_type: "k" });
    const v2 = patch("version = 2\n", cri({ plugins: [p] }));
    expect(v2["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["kata"]).toEqual({ runtime_type: "k" });
    const other = { path: ["io.containerd.grpc.v1.cri", "registry"], values: { x: 1 } };
    expect(patch("version = 3\n", cri({ plugins: [other] }), [2, 0])["plugins"]["io.containerd.grpc.v1.cri"]["registry"]).toEqual({ x: 1 });
  });

  test.each([
    ["a non-table in the way of a patch", '[plugins]\n"io.containerd.grpc.v1.cri" = 5\n', cri()],
    ["a non-table in the way of a plugin", "[plugins]\nfoo = 1\n", cri({ plugins: [{ path: ["foo", "bar"] }] })],
    ["a later plugin through a removed key", "", cri({ plugins: [{ op: "remove", path: ["foo"] }, { path: ["foo", "bar"] }] })],
    ["an unknown plugin op", "", cri({ plugins: [{ op: "replace", path: ["foo"] }] })],
    ["version 5", "version = 5\n", cri()],
    ["a string version", 'version = "2"\n', cri()],
    ["invalid TOML", "[[[", cri()],
  ])("should fail on %s", (_n, src, c) => {
    expect(() => patchContainerdConfig(src, c, [1, 7])).toThrow(ContainerdConfigError);
  });
});

describe("configVersion", () => {
  test.each([
    [{}, 1],
    [{ version: 3 }, 3],
  ])("should read %p as %p", (doc, want) => {
    expect(configVersion(doc)).toBe(want);
  });
});

describe("parseContainerdVersion", () => {
  test.each([
    ["containerd github.com/containerd/containerd/v2 v2.2.0 abcdef\n", [2, 2]],
    ["containerd containerd.io 1.6.20 2806fc1057397dbaeefbea0e4e17bddfbd388f38", [1, 6]],
    ["containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+b1", [1, 6]],
    ["v2.1.3", [2, 1]],
  ])("should parse %p", (text, want) => {
    expect(parseContainerdVersion(text)).toEqual(want as [number, number]);
  });
  test("should reject text without a version", () => {
    expect(() => parseContainerdVersion("containerd")).toThrow(ContainerdConfigError);
  });
});
