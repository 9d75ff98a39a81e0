import type { ApplyExtension } from "../../apply/extension.ts";
import type { InPlaceDeps } from "./deps.ts";
import type { InPlaceHooks } from "./extension.ts";

/**
 * The in-place extension whose code (OS update, credential rotation, kubelet checks: extension.ts) is
 * loaded by import() on its first hook, i.e. in an apply: the feature's index is on the start-up path for
 * its watch predicates, and an agent that applies nothing never evaluates the rest (idle RSS).
 */
export function inPlaceExtension(inPlace: InPlaceDeps | undefined): ApplyExtension {
  let loaded: Promise<InPlaceHooks> | undefined;
  const extension = () => (loaded ??= import("./extension.ts").then((m) => m.inPlaceExtension(inPlace)));
  return {
    name: "in-place",
    plan: async (input) => (await extension()).plan(input),
    beforeUnitCommands: async (ctx) => (await extension()).beforeUnitCommands(ctx),
    afterUnitCommands: async (ctx) => (await extension()).afterUnitCommands(ctx),
    finish: async (ctx, osc) => (await extension()).finish(ctx, osc),
  };
}
