import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs } from "../host/index.ts";
import { OfflineSystemd, OfflineUnitError, parseInstallSection } from "./offline.ts";

describe("parseInstallSection", () => {
  test("collects WantedBy, RequiredBy and Alias of the [Install] section only", () => {
    const unit =
      "[Unit]\nWantedBy=not-this.target\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target  other.target\n# WantedBy=commented.target\nRequiredBy=local-fs.target\nAlias=alias.service\n";
    expect(parseInstallSection(unit)).toEqual({
      wantedBy: ["multi-user.target", "other.target"],
      requiredBy: ["local-fs.target"],
      alias: ["alias.service"],
    });
  });

  test("is empty for a static unit without [Install]", () => {
    expect(parseInstallSection("[Service]\nExecStart=/bin/true\n")).toEqual({ wantedBy: [], requiredBy: [], alias: [] });
  });
});

describe("OfflineSystemd", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "offline-systemd-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test("enable creates the symlinks systemctl --root would, disable removes them", async () => {
    const host = createHostFs(root);
    await host.writeFileAtomic(
      "/etc/systemd/system/a.service",
      "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\nAlias=b.service\n",
      0o600,
    );
    const systemd = new OfflineSystemd(host);
    await systemd.enable(["a.service"]);
    expect(await readlink(join(root, "etc/systemd/system/multi-user.target.wants/a.service"))).toBe("/etc/systemd/system/a.service");
    expect(await readlink(join(root, "etc/systemd/system/b.service"))).toBe("/etc/systemd/system/a.service");

    await systemd.disable(["a.service"]);
    expect(await host.stat("/etc/systemd/system/multi-user.target.wants/a.service")).toBeUndefined();
    expect(await host.stat("/etc/systemd/system/b.service")).toBeUndefined();
    expect(systemd.actions.map((a) => a.action)).toEqual(["Enable", "Disable"]);
  });

  test("enable of a unit that has no file anywhere is an error naming the unit", async () => {
    const systemd = new OfflineSystemd(createHostFs(root));
    await expect(systemd.enable(["missing.service"])).rejects.toThrow(OfflineUnitError);
    await expect(systemd.enable(["missing.service"])).rejects.toThrow("unit file missing.service not found");
  });

  test("finds units shipped by the OS under /usr/lib/systemd/system", async () => {
    const host = createHostFs(root);
    await host.writeFileAtomic("/usr/lib/systemd/system/os.service", "[Install]\nWantedBy=multi-user.target\n", 0o644);
    await new OfflineSystemd(host).enable(["os.service"]);
    expect(await readlink(join(root, "etc/systemd/system/multi-user.target.wants/os.service"))).toBe("/usr/lib/systemd/system/os.service");
  });
});
