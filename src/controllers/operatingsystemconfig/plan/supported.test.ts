import { describe, expect, test } from "bun:test";
import { TerminalError } from "../../../kube/index.ts";
import { decodeOsc } from "../../../osc/index.ts";
import { UnsupportedOscFieldError } from "./inplace-spec.ts";
import { checkSupportedFields } from "./supported.ts";

const file = (content: unknown) => ({ path: "/a", content });

describe("checkSupportedFields", () => {
  test.each<[string, unknown]>([
    ["spec.criConfig.name", { spec: { criConfig: { name: "cri-o" } } }],
    ["spec.criConfig.cgroupDriver", { spec: { criConfig: { name: "containerd", cgroupDriver: "openrc", containerd: {} } } }],
    ["spec.units[1].command", { spec: { units: [{ name: "a" }, { name: "b", command: "reload" }] } }],
    ["status.extensionUnits[0].command", { status: { extensionUnits: [{ name: "b", command: "try-restart" }] } }],
    ["spec.files[0].content", { spec: { files: [file({})] } }],
    ["status.extensionFiles[0].content", { status: { extensionFiles: [file({ transmitUnencoded: true })] } }],
    [
      "spec.inPlaceUpdates.machineImageName",
      { spec: { inPlaceUpdates: { operatingSystemVersion: "1", kubelet: "1.31.0", machineImageName: "gl" } } },
    ],
    ["status.inPlaceUpdates.rollback", { status: { inPlaceUpdates: { rollback: {} } } }],
  ])("should stop the apply naming %s", (field, osc) => {
    let err: unknown;
    try {
      checkSupportedFields(decodeOsc(JSON.stringify(osc)));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TerminalError);
    expect((err as Error).cause).toBeInstanceOf(UnsupportedOscFieldError);
    expect(((err as Error).cause as UnsupportedOscFieldError).field).toBe(field);
    expect((err as Error).message).toStartWith(`operating system config field ${field} is not supported by this agent`);
  });

  test("should accept what the agent implements", () => {
    const osc = {
      spec: {
        criConfig: { name: "containerd", cgroupDriver: "cgroupfs", containerd: { sandboxImage: "p" } },
        units: [{ name: "a", command: "start" }, { name: "b", command: "restart" }, { name: "c", command: "stop" }, { name: "d" }],
        files: [
          file({ inline: { data: "x" } }),
          file({ secretRef: { name: "s", dataKey: "k" } }),
          file({ imageRef: { image: "i", filePathInImage: "/f" } }),
        ],
        inPlaceUpdates: { operatingSystemVersion: "1", kubelet: "1.31.0" },
      },
      status: { inPlaceUpdates: { osUpdate: { command: "/bin/update" } } },
    };
    expect(() => checkSupportedFields(decodeOsc(JSON.stringify(osc)))).not.toThrow();
  });
});
