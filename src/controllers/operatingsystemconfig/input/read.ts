import type { Clock } from "../../../clock/index.ts";
import type { HostFs } from "../../../host/index.ts";
import { patchNodeMetadata, TerminalError, type KubeObject, type ObjectKey } from "../../../kube/index.ts";
import { errorText, type Logger, step } from "../../../log/index.ts";
import type { Osc } from "../../../osc/index.ts";
import { findNode } from "../../shared/index.ts";
import type { NodeIdentity } from "../apply/ports.ts";
import { checksumAnnotation } from "../constants.ts";
import { leftoversPending } from "../plan/leftovers.ts";
import { skipsStateFiles } from "../plan/stateless.ts";
import { LabelPatch } from "./label-patch.ts";
import { desiredNodeLabels, isControlPlane, kubernetesVersionLabelValue } from "./node.ts";
import { adoptDiscoveredNode, decodedOrWhy, readNodeWhileDecoding } from "./node-read.ts";
import {
  checksumDataScriptAnnotation,
  decodeSecret,
  OscChecksumError,
  OscSecretDropped,
  readSecret,
  readSecretAgain,
  type SecretReadDeps,
  secretChecksum,
} from "./secret.ts";

export interface InputDeps extends SecretReadDeps {
  readonly clock: Clock;
  readonly host: HostFs;
  readonly log: Logger;
  readonly node: NodeIdentity;
  readonly selfHosted?: boolean | undefined;
  readonly config: { readonly kubernetesVersion: string };
}

/** What the read stage found: the version to work on, no Secret, or a Secret that cannot be applied. */
export type OscInput =
  | { readonly kind: "missing"; readonly node: KubeObject | undefined }
  /** Report it, then throw `thrown` (a TerminalError waits for a new osc.yaml; a missing checksum backs off). */
  | {
      readonly kind: "rejected";
      readonly node: KubeObject | undefined;
      readonly checksum: string;
      readonly err: unknown;
      readonly thrown: unknown;
    }
  | {
      readonly kind: "ok";
      readonly secret: KubeObject;
      /**
       * The decoded OSC, from the Secret's cache entry: taken when needed, so that a reconcile that only
       * finds the Node up to date holds none, and a newer version arriving meanwhile frees the old one
       * (issue 27). Throws OscSecretDropped once that has happened.
       */
      readonly takeOsc: () => Osc;
      readonly checksum: string;
      readonly node: KubeObject | undefined;
      /** Whether the Node was known at process start (no lock or slot is taken while bootstrapping). */
      readonly nodeKnownAtStart: boolean;
      /** The Kubernetes version label value, checked before anything is applied. */
      readonly version: string | undefined;
      /** The Node label patch, running during the planning (every way out awaits it). */
      readonly labels: LabelPatch;
    };

/** §4 steps 1-7 (osc-pipeline.md 1): the Secret, the Node, the decoded OSC and the early label patch. */
export async function readInput(deps: InputDeps, key: ObjectKey, signal: AbortSignal): Promise<OscInput> {
  const { kube } = deps;
  // 1. Read the Secret; a missing one is reported on the Node and looked at again with backoff.
  const cached = await step("failed getting secret", () => readSecret(deps, key, signal));
  if (cached === undefined) return { kind: "missing", node: await step("failed getting node", () => findNode(kube, deps.node, signal)) };

  // 2. The configured Kubernetes version is checked before anything is applied, so a bad
  //    configuration cannot fail only the very last step.
  const version = kubernetesVersionLabelValue(deps.config.kubernetesVersion);

  // 3. Read the Node, decoding the Secret meanwhile (see readNodeWhileDecoding).
  const known = deps.node.nodeName !== undefined;
  const read = await readNodeWhileDecoding(
    () => step("failed getting node", () => findNode(kube, deps.node, signal)),
    () => summary(deps, decodeSecret(cached, key)),
  );
  const { node } = read;
  let { decoded } = read;
  let secret = cached;
  // The cached version's OSC was let go as a newer event streamed in (secret.ts): read the Secret again.
  if (!decoded.ok && decoded.err instanceof OscSecretDropped) {
    const again = await step("failed getting secret", () =>
      readSecretAgain(deps, cached, key, signal, (s) => decodedOrWhy(() => summary(deps, decodeSecret(s, key)))),
    );
    if (again === undefined) return { kind: "missing", node };
    secret = again.secret;
    decoded = again.used;
  }

  // 4. A Node registered since start restarts the agent (not for gardenadm's provision OSC, 9.4).
  adoptDiscoveredNode(deps.node, known, node, !decoded.ok || !decoded.value.skipsStateFiles, deps.log);

  // 5. An undecodable Secret is reported once and waits for a new osc.yaml.
  const checksum = secretChecksum(secret);
  if (!decoded.ok)
    return {
      kind: "rejected",
      node,
      checksum,
      err: decoded.err,
      thrown: new TerminalError(errorText(decoded.err), { cause: decoded.err }),
    };
  const { controlPlane } = decoded.value;

  // 6. Start the Node label patch (§4 step 4); it runs during the planning, see LabelPatch. The Node was
  //    just read: when it carries every label already, the merge patch would change nothing (the API
  //    server keeps the resourceVersion), so it is not sent and the apply does not wait a round trip for it.
  const labels =
    node === undefined
      ? LabelPatch.none
      : await step("failed computing node labels", async () => {
          const wanted = await desiredNodeLabels(deps.host, controlPlane);
          if (carriesLabels(node, wanted)) return LabelPatch.none;
          return LabelPatch.start(() =>
            step("failed patching node labels", () => patchNodeMetadata(kube, node, { labels: wanted }, signal)),
          );
        });

  // 7. A Secret without checksum is rejected (the condition says so, else the Node would show the old state).
  if (checksum === "") {
    await labels.done();
    const err = new OscChecksumError(`secret ${key.namespace}/${key.name} has no ${checksumDataScriptAnnotation} annotation`);
    return { kind: "rejected", node, checksum: "", err, thrown: err };
  }
  const decodedSecret = secret;
  return { kind: "ok", secret, takeOsc: () => decodeSecret(decodedSecret, key), checksum, node, nodeKnownAtStart: known, version, labels };
}

/** What the read stage needs of the OSC itself; the OSC stays in the Secret's cache entry (see takeOsc). */
interface OscSummary {
  readonly skipsStateFiles: boolean;
  readonly controlPlane: boolean;
}

const summary = (deps: InputDeps, osc: Osc): OscSummary => ({
  skipsStateFiles: skipsStateFiles(deps.selfHosted, osc),
  controlPlane: isControlPlane(osc),
});

/** §4 step 8: the Node has the checksum and no earlier attempt left work behind. */
export async function upToDate(
  host: HostFs,
  input: { readonly node: KubeObject | undefined; readonly checksum: string },
): Promise<boolean> {
  const { node, checksum } = input;
  return node !== undefined && node.metadata.annotations?.[checksumAnnotation] === checksum && !(await leftoversPending(host, checksum));
}

const carriesLabels = (node: KubeObject, wanted: Readonly<Record<string, string>>): boolean => {
  const has = node.metadata.labels ?? {};
  return Object.entries(wanted).every(([k, v]) => has[k] === v);
};
