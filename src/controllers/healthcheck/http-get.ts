import type { ProbeFetch } from "./kubelet-probe.ts";

/**
 * A plain HTTP GET over node:http, returned as a Response whose body streams the answer. Unlike
 * Bun's fetch it never goes through HTTP_PROXY: Go's client does not proxy loopback requests, and a
 * proxy configured for the node must not answer for the kubelet. The signal aborts the request at
 * any point (connect, headers); cancelling the Response body closes the connection.
 */
export const httpGet: ProbeFetch = async (url, init) => {
  // Loaded on the first probe, not at start-up.
  const [{ request }, { Readable }] = await Promise.all([import("node:http"), import("node:stream")]);
  return new Promise<Response>((resolve, reject) => {
    const { signal } = init;
    if (signal.aborted) return reject(signal.reason);
    const req = request(url, { method: "GET", agent: false }, (res) => {
      signal.removeEventListener("abort", onAbort);
      signal.addEventListener("abort", () => res.destroy(), { once: true });
      resolve(new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, { status: res.statusCode ?? 0 }));
    });
    const onAbort = () => {
      req.destroy();
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    req.on("error", (err) => {
      signal.removeEventListener("abort", onAbort);
      reject(err);
    });
    req.end();
  });
};
