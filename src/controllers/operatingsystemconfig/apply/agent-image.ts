import { ImageSignatureError } from "../../../registry/index.ts";
import { nodeRef } from "../../events.ts";
import type { StepContext } from "./context.ts";
import { agentBinaryPath } from "../constants.ts";

const agentImageSignatureReason = "AgentImageSignatureInvalid";

/**
 * The image reference to pull for `path`: for the agent's own binary, what the signature check
 * verified (pinned by digest). A missing or bad signature keeps the old binary: Warning event on the
 * Node, then the error fails the apply (retried with backoff, like any failed pull).
 */
export async function imageToPull(ctx: StepContext, path: string, image: string): Promise<string> {
  const verify = ctx.ports.verifyAgentImage;
  if (path !== agentBinaryPath || verify === undefined) return image;
  try {
    return await verify(image, ctx.signal);
  } catch (err) {
    if (err instanceof ImageSignatureError && ctx.node !== undefined) {
      await ctx.ports.events.event(
        nodeRef(ctx.node),
        "Warning",
        agentImageSignatureReason,
        "Verify",
        `keeping the current agent binary: ${err.message}`,
      );
    }
    throw err;
  }
}
