import { describe, expect, test } from "bun:test";
import { RestartRequested } from "../../../kube/index.ts";
import type { KubeObject } from "../../../kube/index.ts";
import { adoptDiscoveredNode, readNodeWhileDecoding } from "./node-read.ts";

const node: KubeObject = { metadata: { name: "node-a" } };

describe("readNodeWhileDecoding", () => {
  test("should send the Node GET before decoding and return both", async () => {
    const order: string[] = [];
    const answer = Promise.withResolvers<KubeObject | undefined>();
    const decoding = Promise.withResolvers<void>();
    const read = readNodeWhileDecoding(
      () => {
        order.push("get sent");
        return answer.promise;
      },
      () => {
        order.push("decoded");
        decoding.resolve();
        return 42;
      },
    );
    expect(order).toEqual(["get sent"]); // the decode waits for the request to reach the wire
    await decoding.promise;
    expect(order).toEqual(["get sent", "decoded"]); // decoded while the GET is still unanswered
    answer.resolve(node);
    expect(await read).toEqual({ node, decoded: { ok: true, value: 42 } });
  });

  test("should return a failed decode as a value", async () => {
    const bad = new Error("no osc.yaml key found");
    const read = await readNodeWhileDecoding(
      async () => undefined,
      () => {
        throw bad;
      },
    );
    expect(read).toEqual({ node: undefined, decoded: { ok: false, err: bad } });
  });

  test("should throw the GET's failure even when the decode failed too", async () => {
    const answer = Promise.withResolvers<KubeObject | undefined>();
    const read = readNodeWhileDecoding(
      () => answer.promise,
      () => {
        throw new Error("no osc.yaml key found");
      },
    );
    answer.reject(new Error("failed getting node: connection refused"));
    await expect(read).rejects.toThrow("failed getting node: connection refused");
  });
});

describe("adoptDiscoveredNode", () => {
  const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

  test("should remember the Node and ask for a restart when it appeared since start", () => {
    const identity = { hostName: "host-a", nodeName: undefined as string | undefined };
    expect(() => adoptDiscoveredNode(identity, false, node, true, silent)).toThrow(RestartRequested);
    expect(identity.nodeName).toBe("node-a");
  });

  test("should remember the Node without a restart for a provision OSC", () => {
    const identity = { hostName: "host-a", nodeName: undefined as string | undefined };
    adoptDiscoveredNode(identity, false, node, false, silent);
    expect(identity.nodeName).toBe("node-a");
  });

  test.each([
    ["the Node was known at start", true, node],
    ["there is no Node yet", false, undefined],
  ])("should change nothing when %s", (_name, knownAtStart, found) => {
    const identity = { hostName: "host-a", nodeName: knownAtStart ? "node-a" : undefined };
    adoptDiscoveredNode(identity, knownAtStart, found, true, silent);
    expect(identity.nodeName).toBe(knownAtStart ? "node-a" : undefined);
  });
});
