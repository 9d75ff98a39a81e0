import { describe, expect, test } from "bun:test";
import { TerminalError } from "../../../kube/index.ts";
import { decodeOsc } from "../../../osc/index.ts";
import { checkInPlaceFields, inPlaceSpecOf, osUpdateOf, UnsupportedOscFieldError } from "./inplace-spec.ts";

const osc = (spec: unknown, status: unknown = {}) =>
  decodeOsc(JSON.stringify({ spec: { inPlaceUpdates: spec }, status: { inPlaceUpdates: status } }));

describe("inPlaceSpecOf", () => {
  test("should read the kubelet version as string or as object", () => {
    expect(inPlaceSpecOf(osc({ operatingSystemVersion: "1.2", kubelet: "1.31.2" }))?.kubeletVersion).toBe("1.31.2");
    expect(
      inPlaceSpecOf(osc({ operatingSystemVersion: "1.2", kubelet: { version: "1.32.0", cpuManagerPolicy: "static" } }))?.kubeletVersion,
    ).toBe("1.32.0");
  });

  test("should tell an absent sub-section from one without a time", () => {
    const s = inPlaceSpecOf(osc({ operatingSystemVersion: "1", kubelet: "1.31.0", credentialsRotation: { certificateAuthorities: {} } }));
    expect(s?.credentialsRotation).toEqual({ certificateAuthorities: null, serviceAccountKey: undefined });
  });

  test("should be undefined for a rolling-update pool", () => {
    expect(inPlaceSpecOf(decodeOsc("spec: {}\n"))).toBeUndefined();
  });
});

describe("osUpdateOf", () => {
  test("should read command and args", () => {
    expect(osUpdateOf(osc({}, { osUpdate: { command: "/opt/bin/update", args: ["--version", "2"] } }))).toEqual({
      command: "/opt/bin/update",
      args: ["--version", "2"],
    });
  });
});

describe("checkInPlaceFields", () => {
  test.each([
    ["spec.inPlaceUpdates.machineImage", osc({ operatingSystemVersion: "1", kubelet: "1.31.0", machineImage: "x" })],
    ["spec.inPlaceUpdates.credentialsRotation.etcdEncryptionKey", osc({ kubelet: "1", credentialsRotation: { etcdEncryptionKey: {} } })],
    ["status.inPlaceUpdates.osUpdate.env", osc({ kubelet: "1" }, { osUpdate: { command: "x", env: ["A=1"] } })],
  ])("should stop the apply naming %s", (field, o) => {
    let err: unknown;
    try {
      checkInPlaceFields(o);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TerminalError);
    expect((err as Error).cause).toBeInstanceOf(UnsupportedOscFieldError);
    expect(((err as Error).cause as UnsupportedOscFieldError).field).toBe(field);
    expect((err as Error).message).toBe(
      `operating system config field ${field} is not supported by this agent (unknown field); nothing was applied`,
    );
  });

  test("should accept every known field", () => {
    expect(() =>
      checkInPlaceFields(
        osc(
          {
            operatingSystemVersion: "1",
            kubelet: "1.31.0",
            credentialsRotation: { certificateAuthorities: { lastInitiationTime: "2026-01-01T00:00:00Z" }, serviceAccountKey: {} },
          },
          { osUpdate: { command: "x", args: [] } },
        ),
      ),
    ).not.toThrow();
  });
});
