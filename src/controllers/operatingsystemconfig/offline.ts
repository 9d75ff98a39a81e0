import { realClock } from "../../clock/index.ts";
import { createHostFs } from "../../host/index.ts";
import { RestartRequested, type Kube } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { decodeOsc } from "../../osc/index.ts";
import { createRegistryClient, extractFileFromImage, loadRegistryCredentials } from "../../registry/index.ts";
import { OfflineSystemd } from "../../systemd/index.ts";
import type { EventRecorder } from "../events.ts";
import { applyOsc, type ApplyStop } from "./apply/run.ts";
import { createContainerdInfo } from "./apply/containerd/index.ts";
import type { OscControllerDeps } from "./deps.ts";
import { oscPlugins } from "./plugins.ts";
import { unreachable } from "./preview/gates.ts";

class OfflineApplyError extends Error {
  override readonly name = "OfflineApplyError";
}

const noEvents: EventRecorder = { event: async () => {} };

export interface OfflineApplyInput {
  readonly root: string;
  readonly osc: Uint8Array;
  /** Architecture of the image (imageRef files) in Go/OCI terms. */
  readonly arch: string;
  readonly processPath: string;
  readonly plainHttpRegistries: readonly string[];
  readonly log: Logger;
}

export interface OfflineApplyReport {
  readonly checksum: string;
  readonly actions: readonly { action: string; units: readonly string[] }[];
}

/**
 * The live apply over an image root, systemd replaced by `systemctl --root`-style symlinks; the checksum
 * is the sha256 of the OSC bytes, as gardenlet's `checksum/data-script`.
 */
export async function applyOffline(input: OfflineApplyInput, signal: AbortSignal): Promise<OfflineApplyReport> {
  const host = createHostFs(input.root);
  const arch = input.arch;
  const platform = { os: "linux", architecture: arch };
  const osc = decodeOsc(input.osc);
  const checksum = new Bun.CryptoHasher("sha256").update(input.osc).digest("hex");
  const systemd = new OfflineSystemd(host);
  // The image root's own registry-auth.json (an earlier OSC file) authenticates pulls, as on a live node.
  const registry = createRegistryClient({
    plainHttpHosts: input.plainHttpRegistries,
    credentialSource: () => loadRegistryCredentials(host),
  });
  const deps: OscControllerDeps = {
    // No API server offline: secretRef files cannot be resolved.
    kube: unreachable<Kube>(
      () => new OfflineApplyError("secretRef files need an API server; inline them (encoding b64) for an offline apply"),
    ),
    host,
    systemd,
    clock: realClock,
    log: input.log,
    events: noEvents,
    node: { hostName: "", nodeName: undefined },
    config: { secretName: "", kubernetesVersion: "", syncPeriodMs: 0, tokenSyncConfigs: [] },
    processPath: input.processPath,
    containerdInfo: createContainerdInfo(),
    probeFetch: (url, init) => fetch(url, init),
    extractImageFile: async (image, filePathInImage, sig) =>
      (await extractFileFromImage({ registry, image, filePathInImage, platform, cacheDir: "", signal: sig })).data,
    arch,
    onTokenResync: () => {},
  };
  const plugins = oscPlugins(deps);
  let stop: ApplyStop | undefined;
  try {
    stop = await applyOsc(deps, plugins, { osc, checksum, node: undefined }, signal);
  } catch (err) {
    if (!(err instanceof RestartRequested)) throw err;
    // A live agent would restart here and resume from the changes file; offline we just resume.
    stop = await applyOsc(deps, plugins, { osc, checksum, node: undefined }, signal);
  }
  // An in-place change waits for a drained Node, which an offline apply does not have: say so.
  if (stop !== undefined) throw new OfflineApplyError(`not applied: ${"hold" in stop ? stop.hold.message : stop.why}`);
  return { checksum, actions: systemd.actions };
}
