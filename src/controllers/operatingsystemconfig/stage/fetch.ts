import type { Kube, KubeObject } from "../../../kube/index.ts";
import { errorText } from "../../../log/index.ts";
import type { Osc, OscFile } from "../../../osc/index.ts";
import { ImageSignatureError, registryAuthModeProblem, registryAuthPath } from "../../../registry/index.ts";
import { type EventRecorder, nodeRef } from "../../events.ts";
import { fileMode } from "../apply/modes.ts";
import type { ExtractImageFile, PendingPullConfig } from "../apply/ports.ts";
import { agentBinaryPath } from "../constants.ts";
import { checkAgentBinary, fileBytes } from "../plan/content.ts";

// What staging fetches and how: each file's source, the pending version's credentials, the pulls.

/** What fetching needs of the stager's dependencies. */
export interface FetchDeps {
  readonly kube: Kube;
  readonly events: EventRecorder;
  readonly extractImageFile: ExtractImageFile;
  readonly verifyAgentImage?: (image: string, signal: AbortSignal) => Promise<string>;
  readonly arch: string;
}

export class StagingError extends Error {
  override readonly name = "StagingError";
}

export const imageSource = (image: string, pathInImage: string) => `image ${image} ${pathInImage}`;
export const secretSource = (name: string, key: string) => `secret ${name} ${key}`;

export function sourceOf(f: OscFile): { source: string; subject: string } | undefined {
  const c = f.content;
  if (c.inline !== undefined) return undefined;
  if (c.secretRef !== undefined)
    return { source: secretSource(c.secretRef.name, c.secretRef.dataKey), subject: `secret ${c.secretRef.name}` };
  if (c.imageRef !== undefined)
    return { source: imageSource(c.imageRef.image, c.imageRef.filePathInImage), subject: `image ${c.imageRef.image}` };
  return undefined;
}

/** The registry credentials the pending version delivers (they are not on disk before its apply). */
export async function pendingRegistryAuth(kube: Kube, osc: Osc, signal: AbortSignal): Promise<string | undefined> {
  const f = (osc.spec.files ?? []).find((x) => x.path === registryAuthPath);
  if (f === undefined || f.content.imageRef !== undefined) return undefined;
  // As the host's file would be refused once written (src/registry docker-config).
  const problem = registryAuthModeProblem(fileMode(f));
  if (problem !== undefined) throw new StagingError(`file ${registryAuthPath}: ${problem}`);
  try {
    const bytes = await fileBytes(kube, f, signal);
    return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
  } catch (err) {
    throw new StagingError(`file ${registryAuthPath}: ${errorText(err)}`, { cause: err });
  }
}

/** The content of one staged file: a secretRef read, or an imageRef pulled (the agent's own image verified first). */
export async function fetchContent(
  deps: FetchDeps,
  f: OscFile,
  node: KubeObject | undefined,
  pull: PendingPullConfig,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const ref = f.content.imageRef;
  if (ref === undefined || f.content.secretRef !== undefined) {
    const bytes = await fileBytes(deps.kube, f, signal);
    if (bytes === undefined) throw new StagingError("no content");
    checkAgentBinary(f.path, bytes, deps.arch, "secret content", false);
    return bytes;
  }
  const image = await verified(deps, f.path, ref.image, node, signal);
  const bytes = await deps.extractImageFile(image, ref.filePathInImage, signal, pull);
  checkAgentBinary(f.path, bytes, deps.arch, `image ${ref.image}`, false);
  return bytes;
}

/** The agent's own image is pulled by its verified digest where cosign.pub exists (a bad signature: Warning event). */
async function verified(deps: FetchDeps, path: string, image: string, node: KubeObject | undefined, signal: AbortSignal): Promise<string> {
  const verify = deps.verifyAgentImage;
  if (path !== agentBinaryPath || verify === undefined) return image;
  try {
    return await verify(image, signal);
  } catch (err) {
    if (err instanceof ImageSignatureError && node !== undefined) {
      const message = `keeping the current agent binary: ${err.message}`;
      await deps.events.event(nodeRef(node), "Warning", "AgentImageSignatureInvalid", "Verify", message);
    }
    throw err;
  }
}
