import { isQualifiedNamePart, type Kube, type KubeObject, nodes, type Predicate } from "../../../../kube/index.ts";
import type { Gate, GateContext, GateHold, Reserved } from "../../gates/gate.ts";

/** Node annotation naming the hooks that approve a disruptive apply: `a,b`. */
export const disruptionHooksAnnotation = "node-agent.gardener.cloud/disruption-hooks";
/** Each hook's conversation with the agent: `hooks.node-agent.gardener.cloud/<name>: requested|approved|denied|done <c>`. */
const hookAnnotationPrefix = "hooks.node-agent.gardener.cloud/";

/**
 * The hooks the Node names (trimmed, each once; each must be an annotation key's name part), and the
 * 1-based positions in the comma-separated list of the entries that cannot be one.
 */
export function parseHooks(node: KubeObject | undefined): { readonly names: readonly string[]; readonly invalid: readonly number[] } {
  const value = node?.metadata.annotations?.[disruptionHooksAnnotation] ?? "";
  const entries = value.split(",").map((s) => s.trim());
  const names = [...new Set(entries.filter((s) => s !== "" && isQualifiedNamePart(s)))];
  const invalid = entries.flatMap((s, i) => (s !== "" && !isQualifiedNamePart(s) ? [i + 1] : []));
  return { names, invalid };
}

/** The OSC version a hook answers about: the first 12 hex digits of the checksum. */
export const hookVersion = (checksum: string): string => checksum.slice(0, 12);

type Answer = { readonly kind: "approved" } | { readonly kind: "denied"; readonly text: string } | { readonly kind: "pending" };

/** A hook's answer for version `c`; anything naming another version (stale) or no answer yet is pending. */
export function hookAnswer(value: string | undefined, c: string): Answer {
  const v = (value ?? "").trim();
  if (v === `approved ${c}`) return { kind: "approved" };
  if (v === `denied ${c}` || v.startsWith(`denied ${c}:`))
    return { kind: "denied", text: v.slice(`denied ${c}`.length).replace(/^:\s*/, "") };
  return { kind: "pending" };
}

interface Verdict {
  /** Hooks whose annotation must say `requested <c>` before they can answer. */
  readonly toRequest: readonly string[];
  readonly hold?: GateHold;
}

export interface HooksGateDeps {
  readonly kube: Kube;
  readonly syncPeriodMs: number;
}

async function verdict(d: HooksGateDeps, ctx: GateContext): Promise<Verdict | undefined> {
  const hooks = parseHooks(ctx.node);
  if (hooks.names.length === 0 && hooks.invalid.length === 0) return undefined;
  const disruption = await ctx.disruption();
  if (!disruption.disruptive) return undefined;
  const c = hookVersion(ctx.checksum);
  const hold = (message: string): GateHold => ({ reason: "WaitingForDisruptionApproval", message, requeueAfterMs: d.syncPeriodMs });
  if (hooks.invalid.length > 0) {
    // Skipping a misspelt hook would apply without the approval the operator asked for.
    const which = `${hooks.invalid.length === 1 ? "entry" : "entries"} ${hooks.invalid.join(", ")}`;
    return {
      toRequest: [],
      hold: hold(
        `Node annotation ${disruptionHooksAnnotation}: ${which} of the comma-separated list cannot be an annotation name (63 characters of letters, digits, "-", "_" and ".", alphanumeric at both ends)`,
      ),
    };
  }
  const annotations = ctx.node?.metadata.annotations ?? {};
  const denied: string[] = [];
  const missing: string[] = [];
  const toRequest: string[] = [];
  for (const name of hooks.names) {
    const value = annotations[`${hookAnnotationPrefix}${name}`];
    const answer = hookAnswer(value, c);
    if (answer.kind === "denied") denied.push(answer.text === "" ? `hook ${name} denied it` : `hook ${name} denied it: ${answer.text}`);
    if (answer.kind !== "pending") continue;
    missing.push(name);
    if ((value ?? "").trim() !== `requested ${c}`) toRequest.push(name);
  }
  const what = disruption.text;
  if (denied.length > 0)
    return { toRequest, hold: hold(`Disruptive apply of operating system config ${c} (${what}) denied: ${denied.join("; ")}`) };
  if (missing.length > 0)
    return {
      toRequest,
      hold: hold(
        `Waiting for approval of the disruptive apply of operating system config ${c} (${what}) from ${missing.length === 1 ? "hook" : "hooks"} ${missing.join(", ")}: each answers on its annotation ${hookAnnotationPrefix}<name> with "approved ${c}"`,
      ),
    };
  return { toRequest: [] };
}

const patchAnnotations = (kube: Kube, node: KubeObject, annotations: Record<string, string>, signal: AbortSignal) =>
  kube.patch<KubeObject>(nodes, "", node.metadata.name ?? "", "merge", { metadata: { annotations } }, { signal });

const hookAnnotations = (names: readonly string[], value: string): Record<string, string> =>
  Object.fromEntries(names.map((n) => [`${hookAnnotationPrefix}${n}`, value]));

/**
 * Approval before and after a disruptive apply (issue 26): each hook named on the Node is asked
 * (`requested <c>`), the apply waits for every `approved <c>`, and once the checksum is recorded (after
 * the rollout's health wait) each is told `done <c>`. Before the serial lock and the rollout slot.
 */
export const disruptionHooksGate = (d: HooksGateDeps): Gate => ({
  name: "disruption-hooks",
  phase: "admit",
  online: true,
  step: "failed asking the disruption hooks",
  async decide(ctx) {
    const v = await verdict(d, ctx);
    return v?.hold === undefined ? { kind: "proceed" } : { kind: "hold", hold: v.hold };
  },
  async reserve(ctx): Promise<Reserved> {
    const v = await verdict(d, ctx);
    if (v === undefined) return { kind: "reserved" };
    const node = ctx.node as KubeObject;
    const c = hookVersion(ctx.checksum);
    if (v.toRequest.length > 0) await patchAnnotations(d.kube, node, hookAnnotations(v.toRequest, `requested ${c}`), ctx.signal);
    if (v.hold !== undefined) return { kind: "hold", hold: v.hold };
    const names = parseHooks(node).names;
    return {
      kind: "reserved",
      reservation: {
        release: async (signal) => {
          await patchAnnotations(d.kube, node, hookAnnotations(names, `done ${c}`), signal);
        },
      },
    };
  },
});

const hooksState = (o: KubeObject): string => {
  const a = o.metadata.annotations ?? {};
  return JSON.stringify(
    Object.keys(a)
      .filter((k) => k === disruptionHooksAnnotation || k.startsWith(hookAnnotationPrefix))
      .sort()
      .map((k) => [k, a[k]]),
  );
};

/** Node events that matter to the hooks gate: the hooks annotation or a hook's answer changed. */
export const disruptionHooksPredicate: Predicate<KubeObject> = {
  create: () => false,
  update: (oldObj, newObj) => hooksState(oldObj) !== hooksState(newObj),
  delete: () => false,
  generic: () => false,
};
