import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContainerdUnreachableError, createCtrVersionProbe } from "./containerd-probe.ts";

const dir = mkdtempSync(join(tmpdir(), "ctr-probe-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A stand-in `ctr` that logs its arguments and then runs `body`. */
function fakeCtr(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\necho "$@" > ${path}.args\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}
const endpoint = { address: "/run/containerd/containerd.sock", namespace: "k8s.io" };
const signal = () => new AbortController().signal;

describe("createCtrVersionProbe", () => {
  test("should pass the address and namespace to ctr version and succeed when it does", async () => {
    const bin = fakeCtr("ok", "echo 'Server:'; exit 0");
    await createCtrVersionProbe(endpoint, { binary: bin })(signal());
    expect(readFileSync(`${bin}.args`, "utf8").trim()).toBe("--address /run/containerd/containerd.sock --namespace k8s.io version");
  });
  test("should fail with ctr's last error line when the daemon does not answer", async () => {
    const bin = fakeCtr(
      "down",
      `echo 'Client:' ; echo 'ctr: failed to dial "/run/containerd/containerd.sock": connection refused' >&2; exit 1`,
    );
    const err = await createCtrVersionProbe(endpoint, { binary: bin })(signal()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContainerdUnreachableError);
    expect((err as Error).message).toBe('ctr: failed to dial "/run/containerd/containerd.sock": connection refused');
  });
  test("should give up on a hanging ctr after the timeout", async () => {
    const bin = fakeCtr("hang", "exec sleep 30");
    const err = await createCtrVersionProbe(endpoint, { binary: bin, timeoutMs: 50 })(signal()).catch((e: unknown) => e);
    expect((err as Error).message).toBe("containerd version request timed out after 0.05s");
  });
  test("should report a missing ctr binary as unreachable", async () => {
    const err = await createCtrVersionProbe(endpoint, { binary: join(dir, "missing") })(signal()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContainerdUnreachableError);
  });
  test("should rethrow the abort reason when the caller aborts", async () => {
    const bin = fakeCtr("hang2", "exec sleep 30");
    const ac = new AbortController();
    const p = createCtrVersionProbe(endpoint, { binary: bin })(ac.signal);
    ac.abort(new Error("shutdown"));
    expect(((await p.catch((e: unknown) => e)) as Error).message).toBe("shutdown");
  });
});
