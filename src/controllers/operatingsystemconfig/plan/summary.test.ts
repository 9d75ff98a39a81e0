import { describe, expect, test } from "bun:test";
import { emptyChanges } from "../../../osc/index.ts";
import { summarizeChanges } from "./summary.ts";

describe("summarizeChanges", () => {
  test("should count restarts and add containerd for a changed config", () => {
    const c = emptyChanges("x");
    c.units.commands = [
      { name: "kubelet.service", command: "restart" },
      { name: "old.service", command: "stop" },
    ];
    c.containerd.configFileChanged = true;
    expect(summarizeChanges(c)).toEqual({ filesChanged: 0, filesDeleted: 0, unitsRestarted: ["kubelet.service", "containerd.service"] });
  });
});
