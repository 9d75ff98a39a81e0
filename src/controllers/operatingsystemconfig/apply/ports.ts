import type { Clock } from "../../../clock/index.ts";
import type { TokenSyncConfig } from "../../../config/index.ts";
import type { HostFs } from "../../../host/index.ts";
import type { Kube, ObjectKey } from "../../../kube/index.ts";
import type { Logger } from "../../../log/index.ts";
import type { Systemd } from "../../../systemd/index.ts";
import type { EventRecorder } from "../../events.ts";
import type { NodeIdentity as SharedNodeIdentity } from "../../shared/index.ts";
import type { ContainerdInfo, ProbeFetch } from "./containerd/index.ts";

/** Pulls one file out of an OCI image (src/registry `extractFileFromImage` bound to a client and cache in wiring). */
export type ExtractImageFile = (
  image: string,
  filePathInImage: string,
  signal: AbortSignal,
  /** Staging: what the pending version configures that its apply writes before pulling. */
  pending?: PendingPullConfig,
) => Promise<Uint8Array>;

export interface PendingPullConfig {
  /** The docker config (registry-auth.json) the pending version delivers, used instead of the host's. */
  readonly registryAuth?: string;
  /** hosts.toml texts by registry (apply/registries.ts hostsTomlBeforePull), used instead of those on disk. */
  readonly hostsToml: ReadonlyMap<string, string>;
}

/** A staged version's content (stage/, issue 23): undefined for what was not staged, which is then fetched live. */
export interface StagedContent {
  /** The bytes (digest checked) and the blob's host path, which the apply links into place. */
  imageFile(image: string, filePathInImage: string): Promise<{ readonly bytes: Uint8Array; readonly blob: string } | undefined>;
  secretFile(name: string, dataKey: string): Promise<Uint8Array | undefined>;
}

/** The shared node identity; the reconciler fills in the node name once it discovers the Node. */
export type NodeIdentity = Omit<SharedNodeIdentity, "nodeName"> & { nodeName: SharedNodeIdentity["nodeName"] };

/** What the apply's steps use of the outside world (the controller's dependencies minus the gates' and the reporter's). */
export interface ApplyPorts {
  readonly kube: Kube;
  readonly host: HostFs;
  readonly systemd: Systemd;
  readonly clock: Clock;
  readonly log: Logger;
  readonly events: EventRecorder;
  readonly node: NodeIdentity;
  readonly config: { readonly tokenSyncConfigs: readonly TokenSyncConfig[] };
  /** The agent process' PATH (for the containerd env drop-in). */
  readonly processPath: string;
  readonly containerdInfo: ContainerdInfo;
  readonly probeFetch: ProbeFetch;
  readonly extractImageFile: ExtractImageFile;
  /** Checks the agent's own image (cosign, when a key is configured): the digest-pinned reference, or ImageSignatureError. */
  readonly verifyAgentImage?: (image: string, signal: AbortSignal) => Promise<string>;
  /** The version's staged content: the apply reads imageRef and secretRef files from it, not the network. */
  readonly staged?: StagedContent;
  /** Architecture of this machine ("amd64", "arm64") for the self-update check. */
  readonly arch: string;
  /** Writes `secret`'s token file now through the token controller's sync; resolves once on disk. */
  readonly writeTokenFile?: (secret: ObjectKey, signal: AbortSignal) => Promise<void>;
  /** Ask the token controller to write `secret`'s file again (a synced file was deleted). */
  readonly onTokenResync: (secret: ObjectKey) => void;
  /** gardenadm mode (self-hosted machine, input/gardenadm.ts): a provision OSC is applied without state files or restarts. */
  readonly selfHosted?: boolean;
}
