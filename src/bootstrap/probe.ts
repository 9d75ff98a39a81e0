import type { HostFs } from "../host/index.ts";
import { bootstrapTokenPath } from "./paths.ts";
import { errorText } from "../log/index.ts";

export interface ApiServerEndpoint {
  readonly server: string;
  readonly caFile: string;
}

/** Checks that the API server answers; throws with the reason when it does not. */
export type ConnectivityProbe = (signal: AbortSignal) => Promise<void>;

const probeTimeoutMs = 10_000;

/** `fetch` as far as the probe needs it; Bun's fetch accepts `tls`. */
export type ProbeFetch = (url: string, init: RequestInit & { tls?: { ca?: string } }) => Promise<Response>;

export interface ProbeDeps {
  readonly host: HostFs;
  /** Reads `apiServer` from /var/lib/gardener-node-agent/config-<version>.yaml (fixed dir, spec §6.4). */
  readonly loadEndpoint: (signal: AbortSignal) => Promise<ApiServerEndpoint>;
  readonly fetch?: ProbeFetch;
}

/** Failed probe; the message is what the WARNING line shows. */
class ConnectivityError extends Error {
  override readonly name = "ConnectivityError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * GET <server>/version with the CA file and the bootstrap token as bearer token, 10 s timeout
 * (spec §6.4). A missing token file means an anonymous request, like client-go with an absent token file.
 */
export function createConnectivityProbe(deps: ProbeDeps): ConnectivityProbe {
  const doFetch: ProbeFetch = deps.fetch ?? ((url, init) => fetch(url, init));
  return async (signal) => {
    const { server, caFile } = await deps.loadEndpoint(signal);
    const ca = caFile === "" ? undefined : await deps.host.readText(caFile);
    if (caFile !== "" && ca === undefined) throw new ConnectivityError(`CA file ${caFile} does not exist`);
    const token = (await deps.host.readText(bootstrapTokenPath))?.trim();
    const url = `${server.startsWith("https://") || server.startsWith("http://") ? server : `https://${server}`}`.replace(/\/+$/, "");
    let res: Response;
    try {
      res = await doFetch(`${url}/version`, {
        headers: token === undefined || token === "" ? {} : { Authorization: `Bearer ${token}` },
        signal: AbortSignal.any([signal, AbortSignal.timeout(probeTimeoutMs)]),
        ...(ca === undefined ? {} : { tls: { ca } }),
      });
    } catch (err) {
      throw new ConnectivityError(`Get "${url}/version": ${errorText(err)}`, { cause: err });
    }
    await res.arrayBuffer();
    if (!res.ok) throw new ConnectivityError(`Get "${url}/version": unexpected status ${res.status}`);
  };
}
