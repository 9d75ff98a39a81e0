import type { HostFs } from "../../host/index.ts";
import { isNotFound, nodes, type Reconcile, RestartRequested } from "../../kube/index.ts";
import type { KubeObject, Reader } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { type EventRecorder, nodeRef } from "../events.ts";
import { rewriteSecretName } from "./config-rewrite.ts";
import { secretNameLabel } from "./watch.ts";
import { errorText } from "../../log/index.ts";

export interface SecretNameChangeDeps {
  /** Cached read of the own Node (informer). */
  readonly nodes: Reader;
  readonly host: Pick<HostFs, "readText" | "writeFileAtomic">;
  /** Host path of the config file the agent read at start-up (`<config-dir>/config-<version>.yaml`). */
  readonly configPath: string;
  readonly events: EventRecorder;
  readonly log: Logger;
}

const rewriteFailedReason = "SecretNameChangeFailed";
const configMode = 0o600;

/** The config could not be read, decoded or written; retried with backoff, never a restart. */
export class ConfigRewriteError extends Error {
  override readonly name = "ConfigRewriteError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * controllers.md §9: when the Node's label names another OSC Secret than the config file, rewrite
 * the file (whole config re-encoded, keys sorted, 0600) and restart onto it (RestartRequested →
 * exit 0). A label equal to the file, or an empty/removed label, does nothing (upstream would write
 * `secretName: ""` and crash-loop). A file that cannot be rewritten is a Warning event and a retried
 * error — never a restart, so nothing loops.
 */
export function createReconciler(deps: SecretNameChangeDeps): Reconcile {
  return async (key, signal) => {
    const { log } = deps;
    let node: KubeObject;
    try {
      node = await deps.nodes.get<KubeObject>(nodes, "", key.name, { signal });
    } catch (err) {
      if (isNotFound(err)) return {};
      throw new Error(`error retrieving object from store: ${errorText(err)}`, { cause: err });
    }
    const desired = node.metadata.labels?.[secretNameLabel] ?? "";
    if (desired === "") {
      log.info("Node label naming the OSC secret is empty or removed, keeping the configured secret", { label: secretNameLabel });
      return {};
    }

    let rewrite;
    try {
      const text = await deps.host.readText(deps.configPath);
      if (text === undefined) throw new Error("no such file or directory");
      rewrite = rewriteSecretName(text, deps.configPath, desired);
      if (rewrite.text === undefined) return {};
      log.info("Secret name changed, rewriting the config file", {
        path: deps.configPath,
        oldSecretName: rewrite.current,
        newSecretName: desired,
      });
      await deps.host.writeFileAtomic(deps.configPath, rewrite.text, configMode);
    } catch (err) {
      const message = `failed rewriting config file ${deps.configPath} with secret name ${desired}: ${errorText(err)}`;
      await deps.events.event(nodeRef(node), "Warning", rewriteFailedReason, "Reconcile", message);
      throw new ConfigRewriteError(message, { cause: err });
    }
    throw new RestartRequested(`the Node's label ${secretNameLabel} names secret ${desired} instead of ${rewrite.current}`);
  };
}
