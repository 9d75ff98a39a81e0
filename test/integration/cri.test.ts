// The CRI client (gRPC over HTTP/2 with hand-encoded protobuf) against Debian's real containerd,
// started on a private socket with a locally built pause image as the sandbox image.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { connectCriRuntime, GrpcError, type CriRuntime } from "../../src/cri/index.ts";
import { startContainerd, type Containerd } from "../harness/containerd.ts";

let containerd: Containerd;
let cri: CriRuntime;
beforeAll(async () => {
  containerd = await startContainerd();
  cri = await connectCriRuntime(`unix://${containerd.socket}`, 2_000);
}, 60_000);
afterAll(async () => {
  cri?.close();
  await containerd?.stop();
}, 60_000);

describe("CRI runtime client against containerd", () => {
  test("should list, stop and remove pod sandboxes created through RunPodSandbox", async () => {
    expect(await cri.listPodSandboxes()).toEqual([]);
    const a = await containerd.runPodSandbox("pod-a", "kube-system");
    const b = await containerd.runPodSandbox("pod-b");
    const listed = await cri.listPodSandboxes();
    expect(listed.map((p) => [p.id, p.name, p.namespace, p.uid, p.state]).sort()).toEqual(
      [
        [a, "pod-a", "kube-system", "uid-pod-a", 0],
        [b, "pod-b", "default", "uid-pod-b", 0],
      ].sort(),
    );

    await cri.stopPodSandbox(a);
    expect((await cri.listPodSandboxes()).find((p) => p.id === a)?.state).toBe(1);
    await cri.removePodSandbox(a);
    expect((await cri.listPodSandboxes()).map((p) => p.id)).toEqual([b]);
    // Both calls are idempotent in the CRI: a second round on a removed sandbox does not fail.
    await cri.removePodSandbox(a);
    await cri.stopPodSandbox(b);
    await cri.removePodSandbox(b);
    expect(await cri.listPodSandboxes()).toEqual([]);
  }, 120_000);

  test("should report the server's gRPC status on a failed call", async () => {
    const err = await cri.stopPodSandbox("does-not-exist").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GrpcError);
    expect((err as GrpcError).code).toBe(5);
    expect((err as GrpcError).details).toContain("not found");
  });

  test("should fail with Unavailable when nothing listens on the socket", async () => {
    const err = await connectCriRuntime(`unix://${join(tmpdir(), "gna-no-such.sock")}`, 2_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GrpcError);
    expect((err as GrpcError).code).toBe(14);
  });
});
