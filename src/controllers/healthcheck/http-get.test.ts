import { afterAll, describe, expect, test } from "bun:test";
import { createServer, type Socket } from "node:net";
import { httpGet } from "./http-get.ts";
import { probeKubelet } from "./kubelet-probe.ts";

let status = 200;
const healthz = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () => new Response(status === 200 ? "ok" : "x".repeat(1 << 20), { status }),
});
// Accepts connections and never answers: a hung kubelet.
const sockets: Socket[] = [];
const silent = createServer((s) => void sockets.push(s));
await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
const silentPort = (silent.address() as { port: number }).port;
afterAll(async () => {
  await healthz.stop(true);
  for (const s of sockets) s.destroy();
  silent.close();
});
const signal = () => new AbortController().signal;

describe("probeKubelet over httpGet", () => {
  test("should report a 200 answer as healthy", async () => {
    status = 200;
    expect(await probeKubelet(httpGet, `http://127.0.0.1:${healthz.port}/healthz`, signal())).toBeUndefined();
  });
  test("should report another status as an ordinary failure and release the body", async () => {
    status = 500;
    expect(await probeKubelet(httpGet, `http://127.0.0.1:${healthz.port}/healthz`, signal())).toBe("unexpected HTTP status code 500");
  });
  test("should report a refused connection with the URL", async () => {
    const text = await probeKubelet(httpGet, "http://127.0.0.1:1/healthz", signal());
    expect(text).toStartWith('Get "http://127.0.0.1:1/healthz": ');
  });
  test("should give up on a kubelet that never answers after the timeout", async () => {
    const text = await probeKubelet(httpGet, `http://127.0.0.1:${silentPort}/healthz`, signal(), 100);
    expect(text).toStartWith(`Get "http://127.0.0.1:${silentPort}/healthz": `);
  });
  test("should rethrow the caller's abort instead of reporting the kubelet unhealthy", async () => {
    const ac = new AbortController();
    const p = probeKubelet(httpGet, `http://127.0.0.1:${silentPort}/healthz`, ac.signal);
    ac.abort(new Error("shutdown"));
    expect(((await p.catch((e: unknown) => e)) as Error).message).toBe("shutdown");
  });
});
