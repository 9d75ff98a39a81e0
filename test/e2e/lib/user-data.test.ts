import { describe, expect, test } from "bun:test";
import { parse } from "yaml";
import { harnessCloudConfig, metaData, multipartUserData, networkConfig } from "./user-data.ts";

describe("user-data", () => {
  describe("networkConfig", () => {
    test("keeps the MAC a string under YAML 1.1, where unquoted it would be a base-60 integer", () => {
      const doc = parse(networkConfig(), { version: "1.1" }) as { config: { mac_address: unknown }[] };
      expect(doc.config[0]?.mac_address).toBe("52:54:00:12:34:56");
    });
  });

  describe("harnessCloudConfig", () => {
    test("starts the exec channel without default dependencies, so cloud-init.service cannot deadlock on it", () => {
      const text = harnessCloudConfig();
      expect(text.startsWith("#cloud-config\n")).toBe(true);
      const doc = parse(text) as { bootcmd: string[][]; write_files: { path: string; append: boolean; content: string }[] };
      expect(doc.bootcmd[0]?.[2]).toContain("systemd-run --no-block --unit=gna-e2e-guest -p DefaultDependencies=no");
      expect(doc.write_files).toEqual([{ path: "/etc/environment", append: true, content: "GNA_REGISTRY_PLAIN_HTTP=1\n" }]);
    });
  });

  describe("multipartUserData", () => {
    test("puts the cloud-config part before the shell script part and closes the boundary", () => {
      const text = multipartUserData("#cloud-config\na: 1\n", "#!/bin/bash\necho hi");
      const cfg = text.indexOf("Content-Type: text/cloud-config");
      const script = text.indexOf("Content-Type: text/x-shellscript");
      expect(cfg).toBeGreaterThan(0);
      expect(script).toBeGreaterThan(cfg);
      expect(text).toContain("\n\n#!/bin/bash\necho hi\n");
      expect(text.endsWith("--==gna-e2e-boundary==--\n")).toBe(true);
    });
  });

  test("metaData names instance and hostname", () => {
    expect(metaData("i-1", "node-a")).toBe("instance-id: i-1\nlocal-hostname: node-a\n");
  });
});
