import { RestartRequested, type KubeObject } from "../../../kube/index.ts";
import type { Logger } from "../../../log/index.ts";
import type { NodeIdentity } from "../apply/ports.ts";

/** What `readNodeWhileDecoding` found: the Node (if any) and either the decoded value or why decoding failed. */
export interface NodeAndDecoded<T> {
  readonly node: KubeObject | undefined;
  readonly decoded: { readonly ok: true; readonly value: T } | { readonly ok: false; readonly err: unknown };
}

/** Lets requests just started reach the wire before synchronous work occupies the thread. */
const afterPendingIo = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Decodes the Secret while the Node GET is in flight. Outcomes in sequential order: a failed GET is thrown
 * even when the decode failed too; a failed decode is returned for the caller to judge once it knows the Node.
 */
export async function readNodeWhileDecoding<T>(
  getNode: () => Promise<KubeObject | undefined>,
  decode: () => T,
): Promise<NodeAndDecoded<T>> {
  const nodeRead = getNode();
  nodeRead.catch(() => undefined); // awaited below; this only keeps an early rejection from counting as unhandled
  await afterPendingIo();
  const decoded = decodedOrWhy(decode);
  return { node: await nodeRead, decoded };
}

/** `decode`'s value, or what it threw (NodeAndDecoded's `decoded`). */
export function decodedOrWhy<T>(decode: () => T): NodeAndDecoded<T>["decoded"] {
  try {
    return { ok: true, value: decode() };
  } catch (err) {
    return { ok: false, err };
  }
}

/**
 * The own Node appeared since the process started (it was unknown then): remember its name, and restart
 * the agent so that its caches narrow to that Node — unless `restartOnDiscovery` is false (gardenadm's
 * provision OSC never restarts the agent, 9.4, and carries on with the Node found).
 */
export function adoptDiscoveredNode(
  identity: NodeIdentity,
  knownAtStart: boolean,
  node: KubeObject | undefined,
  restartOnDiscovery: boolean,
  log: Logger,
): void {
  if (knownAtStart || node === undefined) return;
  identity.nodeName = node.metadata.name;
  if (!restartOnDiscovery) return;
  log.info("Node registered, restarting to narrow the caches to it", { nodeName: node.metadata.name });
  throw new RestartRequested("node discovered");
}
