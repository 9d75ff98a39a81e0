import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { FakeSystemd } from "../../test/doubles/systemd/index.ts";
import type { CriRuntime, PodSandbox } from "../cri/index.ts";
import { createHostFs, type Mounts, UnmountError } from "../host/index.ts";
import type { Logger } from "../log/index.ts";
import { resetNode, type ResetDeps } from "./reset.ts";
import { TaskGraphError } from "./tasks.ts";

const log: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
const signal = new AbortController().signal;

/** A CRI runtime in memory: each id fails its stop/remove calls `failures` times first. */
function fakeCri(sandboxes: string[], failures: Record<string, number> = {}) {
  const calls: string[] = [];
  const left = new Map(Object.entries(failures));
  const live = new Set(sandboxes);
  const maybeFail = (what: string, id: string) => {
    calls.push(`${what} ${id}`);
    const n = left.get(id) ?? 0;
    if (n > 0) {
      left.set(id, n - 1);
      throw new Error(`${what} of ${id} timed out`);
    }
  };
  const cri: CriRuntime = {
    listPodSandboxes: async () => [...live].map((id): PodSandbox => ({ id, name: id, namespace: "default", uid: id, state: 0 })),
    stopPodSandbox: async (id) => maybeFail("stop", id),
    removePodSandbox: async (id) => {
      maybeFail("remove", id);
      live.delete(id);
    },
    close: () => {},
  };
  return { cri, calls, live };
}

let root = "";
const put = async (path: string, data = "x") => {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), data);
};
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "gna-reset-unit-"));
  await put("/var/lib/gardener-node-agent/credentials/kubeconfig");
  await put("/var/lib/kubelet/pods/a/volumes/v/data");
});
afterEach(() => rm(root, { recursive: true, force: true }));

const deps = (cri: CriRuntime, mounts: Mounts, systemd = new FakeSystemd()): ResetDeps => ({
  host: createHostFs(root),
  systemd,
  connectCri: async () => cri,
  mounts,
  log,
  reporter: { started: () => {}, finished: () => {} },
});
const noMounts: Mounts = { list: async () => [], unmount: async () => false };

describe("resetNode", () => {
  test("should retry a sandbox call up to 5 times in all", async () => {
    const { cri, calls, live } = fakeCri(["a"], { a: 4 });
    await resetNode(deps(cri, noMounts), signal);
    expect(calls.filter((c) => c === "stop a")).toHaveLength(5);
    expect(live.size).toBe(0);
  });

  test("should fail after 5 failed attempts, still handle the other sandboxes, and skip the later tasks", async () => {
    const { cri, calls, live } = fakeCri(["a", "b"], { a: 5 });
    const err = await resetNode(deps(cri, noMounts), signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskGraphError);
    expect((err as Error).message).toBe(
      '1 error occurred: task "Stopping containers" failed: stopping pod sandbox a failed after 5 attempts: stop of a timed out',
    );
    expect(calls.filter((c) => c === "stop a")).toHaveLength(5);
    expect([...live]).toEqual(["a"]);
    expect(existsSync(join(root, "var/lib/gardener-node-agent/credentials/kubeconfig"))).toBe(true);
  });

  test("should unmount below the kubelet dir deepest first, and nothing elsewhere", async () => {
    const unmounted: string[] = [];
    const kubelet = join(root, "var/lib/kubelet");
    const mounts: Mounts = {
      list: async () => ["/", `${kubelet}/pods/a/volumes/v`, `${kubelet}-other`, `${kubelet}/pods/a/volumes/v/nested`, kubelet],
      unmount: async (p) => (unmounted.push(p), true),
    };
    await resetNode(deps(fakeCri([]).cri, mounts), signal);
    expect(unmounted).toEqual([`${kubelet}/pods/a/volumes/v/nested`, `${kubelet}/pods/a/volumes/v`]);
    expect(readdirSync(kubelet)).toEqual([]);
    expect(readdirSync(join(root, "var/lib/gardener-node-agent"))).toEqual([]);
  });

  test("should keep the kubelet dir's content when an unmount fails, while the agent's dir is emptied", async () => {
    const mounts: Mounts = {
      list: async () => [join(root, "var/lib/kubelet/pods/a/volumes/v")],
      unmount: async (p) => {
        throw new UnmountError(p, 16);
      },
    };
    const err = await resetNode(deps(fakeCri([]).cri, mounts), signal).catch((e: unknown) => e);
    expect((err as Error).message).toContain('task "Unmounting and removing kubelet directory content" failed: failed unmounting');
    expect(existsSync(join(root, "var/lib/kubelet/pods/a/volumes/v/data"))).toBe(true);
    expect(readdirSync(join(root, "var/lib/gardener-node-agent"))).toEqual([]);
  });
});
