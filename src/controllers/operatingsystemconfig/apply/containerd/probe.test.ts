import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeClock } from "../../../../../test/doubles/fake-clock.ts";
import { createHostFs, type HostFs } from "../../../../host/index.ts";
import type { Logger } from "../../../../log/index.ts";
import { type ProbeFetch, probeRegistry } from "./probe.ts";

const log: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };

describe("probeRegistry", () => {
  let root: string;
  let host: HostFs;
  let stop: AbortController;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "osc-probe-"));
    host = createHostFs(root);
    stop = new AbortController();
  });
  afterEach(async () => {
    stop.abort();
    await rm(root, { recursive: true, force: true });
  });

  test("should retry every 2 s until every host answers, with any HTTP status", async () => {
    const clock = new FakeClock();
    const calls: string[] = [];
    let failing = 2;
    const fetch: ProbeFetch = async (url) => {
      calls.push(url);
      if (url.includes("b") && failing-- > 0) throw new TypeError("connection refused");
      return new Response("nope", { status: 503 });
    };
    const done = probeRegistry(
      { fetch, clock, host, log },
      { upstream: "r", hosts: [{ url: "https://a" }, { url: "https://b" }] },
      stop.signal,
    );
    let finished = false;
    done.then(() => (finished = true));
    for (let i = 0; i < 2; i++) {
      await clock.settle();
      expect(finished).toBe(false);
      expect(clock.pending()).toBe(1);
      clock.step(2000);
    }
    await done;
    expect(calls).toEqual(["https://a", "https://b", "https://a", "https://b", "https://a", "https://b"]);
  });

  test("should trust exactly the given CA files, relative ones under the registry's certs.d dir", async () => {
    await host.writeFileAtomic("/etc/containerd/certs.d/r/ca.pem", "CA-REL", 0o644);
    await host.writeFileAtomic("/abs/ca.pem", "CA-ABS", 0o644);
    const seen: (string[] | undefined)[] = [];
    const fetch: ProbeFetch = async (_url, init) => {
      seen.push(init.tls?.ca);
      return new Response("");
    };
    await probeRegistry(
      { fetch, clock: new FakeClock(), host, log },
      { upstream: "r", hosts: [{ url: "https://a", caCerts: ["ca.pem", "/abs/ca.pem"] }, { url: "https://b" }] },
      stop.signal,
    );
    expect(seen).toEqual([["CA-REL", "CA-ABS"], undefined]);
  });

  test("should give up when the reconcile deadline aborts it", async () => {
    const clock = new FakeClock();
    const fetch: ProbeFetch = async () => {
      throw new TypeError("connection refused");
    };
    const done = probeRegistry({ fetch, clock, host, log }, { upstream: "r", hosts: [{ url: "https://a" }] }, stop.signal);
    await clock.settle();
    stop.abort(new Error("deadline"));
    await expect(done).rejects.toThrow("deadline");
  });
});
