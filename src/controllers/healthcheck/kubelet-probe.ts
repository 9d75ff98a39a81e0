import { errorText } from "../../log/index.ts";
/** The kubelet's healthz endpoint (controllers.md §11). */
export const kubeletHealthUrl = "http://127.0.0.1:10248/healthz";
const kubeletProbeTimeoutMs = 10_000;

/** fetch as the agent uses it; injected so tests need no network namespace tricks. */
export type ProbeFetch = (url: string, init: { signal: AbortSignal }) => Promise<Response>;

/**
 * One GET of the kubelet's healthz: undefined when it answered 200, else the error text for the
 * events. A non-200 answer is an ordinary failure (`unexpected HTTP status code <code>`) — upstream
 * dereferences a nil error there and crashes the agent; not copied. The body is always released.
 */
export async function probeKubelet(
  fetcher: ProbeFetch,
  url: string,
  signal: AbortSignal,
  timeoutMs = kubeletProbeTimeoutMs,
): Promise<string | undefined> {
  let res: Response;
  try {
    res = await fetcher(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) });
  } catch (err) {
    signal.throwIfAborted(); // shutting down is not an unhealthy kubelet
    return `Get ${JSON.stringify(url)}: ${errorText(err)}`;
  }
  await res.body?.cancel();
  return res.status === 200 ? undefined : `unexpected HTTP status code ${res.status}`;
}
