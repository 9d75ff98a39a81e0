import type { Clock } from "../../clock/index.ts";
import { errorText } from "../../log/index.ts";
import { isConflict, nodes } from "../../kube/index.ts";
import type { Kube, KubeObject } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { Systemd } from "../../systemd/index.ts";
import { type EventRecorder, nodeRef } from "../events.ts";
import { eventAction, type HealthChecker, maxFailureDurationMs } from "./checker.ts";
import type { ListHostAddresses } from "./host-addresses.ts";
import { type IpAddr, parseIp, parsePrefixAddr, sameIp } from "./ip.ts";
import { probeKubelet, type ProbeFetch } from "./kubelet-probe.ts";
import { nodeAddresses, nodeReady } from "./node-status.ts";
import { recordReadyToggle } from "./toggles.ts";
import { restartUnit } from "./restart.ts";

const kubeletServiceName = "kubelet.service";

export interface KubeletCheckerDeps {
  /** PUTs the Node status when the lost InternalIP is restored. */
  readonly kube: Kube;
  readonly systemd: Systemd;
  readonly events: EventRecorder;
  readonly clock: Clock;
  readonly log: Logger;
  readonly listAddresses: ListHostAddresses;
  readonly fetch: ProbeFetch;
  /** `http://127.0.0.1:10248/healthz` in production. */
  readonly healthUrl: string;
  /** The first probe waits for it (the agent's start; see setup.ts). */
  readonly firstProbeAfter?: Promise<void>;
}

/** A step of the kubelet check failed before the health probe; the message names it. */
export class KubeletCheckError extends Error {
  override readonly name = "KubeletCheckError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** controllers.md §7 kubelet checker: readiness toggles, InternalIP recovery, then the healthz probe. */
export class KubeletChecker implements HealthChecker {
  readonly name = "kubelet";
  #wasReady = false;
  #toggles: number[] = [];
  #lastInternalIp: IpAddr | undefined;
  #firstFailureMs: number | undefined;

  constructor(private readonly deps: KubeletCheckerDeps) {}

  async check(node: KubeObject, signal: AbortSignal): Promise<void> {
    await this.#countReadyToggles(node);
    await this.#ensureInternalIp(node, signal);
    await this.#probe(node, signal);
  }

  #event(node: KubeObject, type: "Normal" | "Warning", note: string): Promise<void> {
    return this.deps.events.event(nodeRef(node), type, this.name, eventAction, note);
  }

  /** Step 1: a kubelet flapping NotReady→Ready is reported (no reboot is performed). */
  async #countReadyToggles(node: KubeObject): Promise<void> {
    const ready = nodeReady(node);
    if (ready && !this.#wasReady) {
      const { toggles, tooMany } = recordReadyToggle(this.#toggles, this.deps.clock.now());
      this.#toggles = toggles;
      this.deps.log.info("Kubelet became Ready", { readinessChanges: toggles.length, timespan: "10m0s" });
      if (tooMany) {
        await this.#event(
          node,
          "Warning",
          "Kubelet toggled between NotReady and Ready at least 5 times in a 10m0s time window. Rebooting the node might help",
        );
      }
    }
    this.#wasReady = ready;
  }

  /**
   * Step 2: a kubelet that timed out on the cloud provider at start-up may post a status without
   * any address; put back the InternalIP seen before if the host still has it.
   */
  async #ensureInternalIp(node: KubeObject, signal: AbortSignal): Promise<void> {
    const { internalIp, externalIp } = nodeAddresses(node);
    if (internalIp !== undefined) {
      try {
        this.#lastInternalIp = parseIp(internalIp);
      } catch (err) {
        throw new KubeletCheckError(`unable to parse internal IP address ${errorText(err)}`, { cause: err });
      }
      return;
    }
    if (externalIp !== undefined) return;

    const last = this.#lastInternalIp;
    await this.#event(
      node,
      "Warning",
      last === undefined
        ? "Node status does neither have an internal nor an external IP"
        : `Node status does neither have an internal nor an external IP, try to recover from last known internal IP: ${last.text}`,
    );
    let addresses: string[];
    try {
      addresses = this.deps.listAddresses();
    } catch (err) {
      throw new KubeletCheckError("unable to list all network interface IP addresses", { cause: err });
    }
    for (const a of addresses) {
      let ip: IpAddr;
      try {
        ip = parsePrefixAddr(a);
      } catch (err) {
        throw new KubeletCheckError(`unable to parse IP address ${errorText(err)}`, { cause: err });
      }
      if (last === undefined || !sameIp(ip, last)) continue;
      await this.#restoreInternalIp(node, last, signal);
      return;
    }
  }

  async #restoreInternalIp(node: KubeObject, ip: IpAddr, signal: AbortSignal): Promise<void> {
    const status = typeof node["status"] === "object" && node["status"] !== null ? (node["status"] as Record<string, unknown>) : {};
    const updated: KubeObject = { ...node, status: { ...status, addresses: [{ type: "InternalIP", address: ip.text }] } };
    try {
      await this.deps.kube.update(nodes, "", updated, { subresource: "status", signal });
    } catch (err) {
      if (isConflict(err)) throw err; // the next pass sees the newer Node
      this.deps.log.error("Unable to update node status with internal IP", { err });
      await this.#event(node, "Warning", `Unable to update node status with internal IP: ${errorText(err)}`);
      await restartUnit(this.deps, node, kubeletServiceName, signal);
      return;
    }
    this.deps.log.info("Updated internal IP address of node status", { ip: ip.text });
    await this.#event(node, "Normal", `Updated the lost internal IP address of node status to the previous known: ${ip.text} `);
  }

  /** Step 3: healthz; restart the kubelet after one minute of continuous failure. */
  async #probe(node: KubeObject, signal: AbortSignal): Promise<void> {
    await this.deps.firstProbeAfter;
    const failure = await probeKubelet(this.deps.fetch, this.deps.healthUrl, signal);
    if (failure === undefined) {
      if (this.#firstFailureMs !== undefined) {
        this.deps.log.info("Kubelet is healthy again");
        await this.#event(node, "Normal", "Kubelet is healthy");
        this.#firstFailureMs = undefined;
      }
      return;
    }
    const now = this.deps.clock.now();
    if (this.#firstFailureMs === undefined) {
      this.#firstFailureMs = now;
      this.deps.log.error("Kubelet is unhealthy", { err: failure });
      await this.#event(node, "Warning", `Kubelet is unhealthy, health check error: ${failure}`);
    }
    if (Math.abs(now - this.#firstFailureMs) < maxFailureDurationMs) return;

    this.deps.log.error("Kubelet is unhealthy, restarting it", { err: failure, failureDuration: "1m0s" });
    await this.#event(node, "Warning", `Kubelet is unhealthy for more than 1m0s, restarting it. Health check error: ${failure}`);
    await restartUnit(this.deps, node, kubeletServiceName, signal);
    this.#firstFailureMs = undefined;
  }
}
