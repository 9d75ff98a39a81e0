import { realClock } from "../../clock/index.ts";
import { discoverNode } from "../../controllers/shared/index.ts";
import { createHostFs } from "../../host/index.ts";
import { defaultUserAgent } from "../../kube/index.ts";
import type { KubeList, KubeObject } from "../../kube/index.ts";
import { type Connection, connect } from "./connect.ts";
import type { ControllerDeps } from "./deps.ts";
import { hostNameOf } from "./host-facts.ts";

/** The API connection and the node-name discovery already on the wire. */
export interface Discovery {
  readonly connection: Connection;
  readonly hostName: string;
  /**
   * One uncached LIST by the hostname label (§7.1 step 5); several Nodes with it are fatal. The
   * Node informer starts from this LIST instead of sending its own.
   */
  readonly node: Promise<{ readonly node: KubeObject | undefined; readonly list: KubeList<KubeObject> }>;
}

/**
 * Connects and sends the node discovery request, resolving once the request is on its way: the
 * caller loads the controller modules while the API server answers (the wait and that CPU work
 * overlap). Only light modules here, so loading this one costs little before the request.
 */
export async function beginDiscovery(deps: Pick<ControllerDeps, "config" | "root" | "env" | "log" | "signal">): Promise<Discovery> {
  const { config, log, signal } = deps;
  const host = createHostFs(deps.root);
  const connection = await connect(config, { host, clock: realClock, log, userAgent: defaultUserAgent() }, signal);
  const hostName = hostNameOf(deps.env);
  const node = discoverNode(connection.kube, hostName, signal);
  // Awaited by the caller later; a rejection in the meantime is not unhandled.
  node.catch(() => {});
  // The request's headers are built in microtasks; a macrotask later fetch has handed it to the network.
  await new Promise<void>((resolve) => setImmediate(resolve));
  return { connection, hostName, node };
}
