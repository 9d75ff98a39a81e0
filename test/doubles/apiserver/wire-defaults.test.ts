import { describe, expect, test } from "bun:test";
import { withWireDefaults } from "./wire-defaults.ts";

const metadata = { name: "x" };

describe("withWireDefaults", () => {
  test("should give a Node an empty spec and the zero NodeStatus structs", () => {
    expect(withWireDefaults("nodes", { kind: "Node", apiVersion: "v1", metadata })).toEqual({
      kind: "Node",
      apiVersion: "v1",
      metadata,
      spec: {},
      status: {
        daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
        nodeInfo: {
          machineID: "",
          systemUUID: "",
          bootID: "",
          kernelVersion: "",
          osImage: "",
          containerRuntimeVersion: "",
          kubeletVersion: "",
          kubeProxyVersion: "",
          operatingSystem: "",
          architecture: "",
        },
      },
    });
  });

  test("should keep set Node fields, null missing condition times and order status fields as Go does", () => {
    const o = withWireDefaults("nodes", {
      metadata,
      status: {
        nodeInfo: { kubeletVersion: "v1.32.0" },
        conditions: [{ status: "True", type: "Ready", reason: "R" }],
        capacity: { cpu: "2" },
      },
    });
    const status = o["status"] as { conditions: Record<string, unknown>[]; nodeInfo: Record<string, unknown> };
    expect(Object.keys(status)).toEqual(["capacity", "conditions", "daemonEndpoints", "nodeInfo"]);
    expect(status.conditions).toEqual([{ type: "Ready", status: "True", lastHeartbeatTime: null, lastTransitionTime: null, reason: "R" }]);
    expect(Object.keys(status.conditions[0]!)).toEqual(["type", "status", "lastHeartbeatTime", "lastTransitionTime", "reason"]);
    expect(status.nodeInfo["kubeletVersion"]).toBe("v1.32.0");
  });

  test("should give a minimal core Event its struct, time and reporting fields in Go's order", () => {
    const o = withWireDefaults("events", { kind: "Event", apiVersion: "v1", metadata, type: "Normal" });
    expect(o).toEqual({
      kind: "Event",
      apiVersion: "v1",
      metadata,
      involvedObject: {},
      source: {},
      firstTimestamp: null,
      lastTimestamp: null,
      type: "Normal",
      eventTime: null,
      reportingComponent: "",
      reportingInstance: "",
    });
    expect(Object.keys(o)).toEqual([
      "kind",
      "apiVersion",
      "metadata",
      "involvedObject",
      "source",
      "firstTimestamp",
      "lastTimestamp",
      "type",
      "eventTime",
      "reportingComponent",
      "reportingInstance",
    ]);
  });

  test.each([
    ["leases", {}, { spec: {} }],
    ["namespaces", {}, { spec: {}, status: {} }],
    ["pods", {}, { spec: { containers: null }, status: {} }],
    ["certificatesigningrequests", {}, { spec: { request: null, signerName: "" }, status: {} }],
    ["secrets", { type: "Opaque" }, { type: "Opaque" }],
    ["configmaps", {}, {}],
  ])("should serialise an empty %s with %j as %j", (resource, rest, expected) => {
    expect(withWireDefaults(resource, { metadata, ...rest })).toEqual({ metadata, ...expected });
  });
});
