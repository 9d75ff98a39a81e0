import { afterAll, expect, test } from "bun:test";
import { httpGet } from "../../src/controllers/healthcheck/http-get.ts";
import { probeKubelet } from "../../src/controllers/healthcheck/kubelet-probe.ts";

// Here and not beside http-get.ts: the test sets HTTP_PROXY, and nothing in src/ reads the environment.
// Each test file runs in a global of its own, so the variable stays in this file.
let proxied = 0;
const proxy = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => (proxied++, new Response("from the proxy", { status: 502 })) });
const healthz = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("ok") });
afterAll(async () => {
  await proxy.stop(true);
  await healthz.stop(true);
});

test("the kubelet probe never goes through HTTP_PROXY, as Go's client does not proxy loopback", async () => {
  process.env["HTTP_PROXY"] = `http://127.0.0.1:${proxy.port}`;
  expect(await probeKubelet(httpGet, `http://127.0.0.1:${healthz.port}/healthz`, new AbortController().signal)).toBeUndefined();
  expect(proxied).toBe(0);
});
