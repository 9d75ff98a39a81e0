import { describe, expect, test } from "bun:test";
import { RestartRequested } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { createReconciler, HostnameReadError } from "./reconcile.ts";

const log: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
const key = { namespace: "", name: "" };
const signal = new AbortController().signal;
const reconcileWith = (readHostname: () => string | Promise<string>) =>
  createReconciler({ hostName: "worker-a", readHostname, log })(key, signal);

describe("hostname-check reconcile", () => {
  test.each(["worker-a", "Worker-A", "WORKER-A"])("should look again after 30 s when the OS reports %s", async (name) => {
    expect(await reconcileWith(() => name)).toEqual({ requeueAfterMs: 30_000 });
  });
  test("should request a restart naming both hostnames when the hostname changed", async () => {
    const err = await reconcileWith(async () => "Worker-B").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RestartRequested);
    expect((err as RestartRequested).why).toBe("hostname changed from worker-a to worker-b");
  });
  test("should fail with the read error as cause when the hostname cannot be read", async () => {
    const cause = new Error("uname failed");
    const err = await reconcileWith(() => {
      throw cause;
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostnameReadError);
    expect((err as Error).message).toBe("failed fetching hostname: uname failed");
    expect((err as Error).cause).toBe(cause);
  });
});
