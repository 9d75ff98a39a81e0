import type { ProbeFetch } from "./kubelet-probe.ts";

/**
 * A plain HTTP GET that never goes through HTTP_PROXY (`proxy: false`): Go's client does not proxy
 * loopback requests, and a proxy configured for the node must not answer for the kubelet. No
 * keep-alive: each probe opens its own connection, as node:http with `agent: false` did. Bun's fetch
 * instead of node:http: the start already has fetch's code, while node:http and node:stream cost an
 * idle agent several MB of Bun's code pages and heap (issue 25). The signal aborts the request at any
 * point (connect, headers); cancelling the Response body closes the connection.
 */
export const httpGet: ProbeFetch = (url, init) => fetch(url, { signal: init.signal, proxy: false, keepalive: false });
