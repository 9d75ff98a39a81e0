import type { Clock } from "../../clock/index.ts";
import { obtainAgentKubeconfig, type ClusterEndpoint } from "../../credentials/index.ts";
import type { HostFs } from "../../host/index.ts";
import type { Kube, RestConfig } from "../../kube/index.ts";
import { RestartRequested, type Reconcile } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { clientCertificateValidity, renewalDeadline } from "./deadline.ts";
import { errorText } from "../../log/index.ts";

export interface CertificateReconcilerDeps {
  /** Client authenticated with the current client certificate: the CSR is created by the agent's own user. */
  readonly kube: Kube;
  /** The REST config `kube` was built from: its client certificate, server and CA (file path or PEM). */
  readonly restConfig: RestConfig;
  readonly host: HostFs;
  readonly clock: Clock;
  readonly log: Logger;
  /** First line of machine-name, read at start-up: the CSR's CN suffix. */
  readonly machineName: string;
  /** [0,1) source of the renewal jitter; Math.random unless a test pins it. */
  readonly random?: () => number;
}

/** A rotation step failed; retried with backoff. The message names the step, `cause` is the original error. */
export class CertificateRotationError extends Error {
  override readonly name = "CertificateRotationError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** Where the new kubeconfig points: the same server, and the CA by path whenever the REST config had a CA file. */
export function endpointOf(restConfig: RestConfig): ClusterEndpoint {
  if (restConfig.caFile !== undefined && restConfig.caFile !== "") return { server: restConfig.server, caFile: restConfig.caFile };
  return { server: restConfig.server, ...(restConfig.caPem !== undefined ? { caPem: restConfig.caPem } : {}) };
}

/**
 * The certificate controller (controllers.md §6). The renewal deadline is computed once from the
 * client certificate and kept for the life of the process. Past it: CSR with the current identity,
 * credentials/kubeconfig rewritten, then RestartRequested so the new process uses the new
 * certificate. Before it: look again when it is due (the Clock copes with delays beyond 2^31 ms —
 * the production 720 h certificate gives ~24–26 days).
 */
export function createReconciler(deps: CertificateReconcilerDeps): Reconcile {
  const random = deps.random ?? Math.random;
  let deadline: number | undefined;

  return async (_key, signal) => {
    if (deadline === undefined) {
      const validity = clientCertificateValidity(deps.restConfig.clientCertPem, deps.restConfig.clientKeyPem);
      deadline = renewalDeadline(validity, random);
      deps.log.info("Scheduling certificate renewal", { time: new Date(deadline).toISOString() });
    }

    const now = deps.clock.now();
    if (now > deadline) {
      deps.log.info("Start rotating client certificate because renewal deadline exceeded", {
        renewalDeadline: new Date(deadline).toISOString(),
      });
      try {
        await obtainAgentKubeconfig(
          { kube: deps.kube, host: deps.host, clock: deps.clock, log: deps.log },
          endpointOf(deps.restConfig),
          deps.machineName,
          signal,
        );
      } catch (err) {
        throw new CertificateRotationError(`error rotating certificate: ${errorText(err)}`, { cause: err });
      }
      deps.log.info("Certificate rotation complete. Restarting gardener-node-agent");
      throw new RestartRequested("client certificate renewed");
    }
    // Upstream returns deadline − now, which is 0 when both are equal and then never looks again;
    // 1 ms later the deadline is exceeded and the rotation runs.
    return { requeueAfterMs: Math.max(1, deadline - now) };
  };
}
