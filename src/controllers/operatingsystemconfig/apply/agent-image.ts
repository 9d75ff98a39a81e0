import { ImageSignatureError } from "../../../registry/index.ts";
import { nodeRef } from "../../events.ts";
import type { StepContext } from "./context.ts";
import { agentBinaryPath } from "../constants.ts";

const agentImageSignatureReason = "AgentImageSignatureInvalid";

/** The reference to pull; for the agent's own binary the verified digest (a bad signature keeps the old binary, Warning, fails the apply). */
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
