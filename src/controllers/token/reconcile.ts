import type { TokenSyncConfig } from "../../config/index.ts";
import type { HostFs } from "../../host/index.ts";
import { isNotFound, secrets } from "../../kube/index.ts";
import type { KubeObject, Reader, Reconcile } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { EventRecorder, InvolvedObject } from "../events.ts";
import { sameBytes, TokenMissingError, tokenBytes } from "./token-data.ts";
import { errorText } from "../../log/index.ts";

const tokenFileMode = 0o640;
const syncFailedReason = "TokenSyncFailed";

export interface TokenReconcilerDeps {
  /** Live reads (upstream's APIReader): token Secrets are never cached and never watched. */
  readonly apiReader: Reader;
  readonly host: HostFs;
  readonly events: EventRecorder;
  /** Where Warning events go (the own Node); undefined → log only. */
  readonly eventTarget: InvolvedObject | undefined;
  readonly log: Logger;
  readonly syncConfigs: readonly TokenSyncConfig[];
  readonly syncPeriodMs: number;
}

/** One step failed; the message names the step, `cause` is the original error. */
class TokenSyncError extends Error {
  override readonly name = "TokenSyncError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * The token controller (controllers.md §5): copy `data.token` of `kube-system/<secretName>` to
 * its sync path (mode 0640, atomically) when the bytes differ, then look again after syncPeriod.
 */
export function createReconciler(deps: TokenReconcilerDeps): Reconcile {
  const paths = new Map(deps.syncConfigs.map((c) => [c.secretName, c.path]));
  // Secrets whose missing token was already reported: one Warning event per episode, not one per
  // backoff retry (those start at 5 ms and would flood the Node's events).
  const warned = new Set<string>();

  return async (key, signal) => {
    const ref = `${key.namespace}/${key.name}`;
    let secret: KubeObject;
    try {
      secret = await deps.apiReader.get<KubeObject>(secrets, key.namespace, key.name, { signal });
    } catch (err) {
      // NotFound is an error on purpose: the backoff keeps looking until the Secret exists.
      if (isNotFound(err)) throw new TokenSyncError(`secret ${ref} not found: ${errorText(err)}`, { cause: err });
      throw new TokenSyncError(`failed getting secret ${ref}: ${errorText(err)}`, { cause: err });
    }

    const path = paths.get(key.name);
    if (path === undefined) throw new TokenSyncError(`no token sync config found for secret ${ref}`);

    let token: Uint8Array;
    try {
      token = tokenBytes(secret);
    } catch (err) {
      if (err instanceof TokenMissingError && !warned.has(key.name)) {
        warned.add(key.name);
        deps.log.error("Token missing in secret, keeping the current file", { secret: ref, path });
        if (deps.eventTarget !== undefined) {
          await deps.events.event(
            deps.eventTarget,
            "Warning",
            syncFailedReason,
            "sync",
            `${err.message} in secret ${ref}, not updating ${path}`,
          );
        }
      }
      throw err;
    }
    warned.delete(key.name);

    const current = await deps.host.readFile(path).catch((err: unknown) => {
      throw new TokenSyncError(`failed reading token file ${path}: ${errorText(err)}`, { cause: err });
    });
    if (!sameBytes(current, token)) {
      try {
        await deps.host.writeFileAtomic(path, token, tokenFileMode);
      } catch (err) {
        throw new TokenSyncError(`unable to write access token to ${path}: ${errorText(err)}`, { cause: err });
      }
      deps.log.info("Updated token written to disk", { secret: ref, path });
    }
    deps.log.debug("Token is up to date", { secret: ref, path });
    return { requeueAfterMs: deps.syncPeriodMs };
  };
}
