import type { Reconcile } from "../../kube/index.ts";
import { errorText } from "../../log/index.ts";
import { nodeRef } from "../events.ts";
import { HeapShrinker } from "./apply/shrink.ts";
import type { OscControllerDeps } from "./deps.ts";
import { driftConditionMessage } from "./features/drift/index.ts";
import { readInput, upToDate } from "./input/read.ts";
import type { ApplyStage } from "./reconcile-apply.ts";
import { OscReporter } from "./report/reporter.ts";
import { noOscMetrics } from "./report/metrics.ts";
import { Stager } from "./stage/index.ts";

/**
 * The OSC controller's reconcile (§4; stages: README). A hold is a Result (requeue), never an error. A new
 * Secret version during an apply cancels nothing: the queue keeps the key dirty and runs it again after.
 * Steps 8a-16 (gates, apply, record: reconcile-apply.ts) load on the first version that is not applied yet:
 * an agent that finds itself up to date never evaluates the apply path's modules (idle RSS).
 */
export function createReconciler(deps: OscControllerDeps): Reconcile {
  const { driftStatus } = deps;
  // Every gate reports its GateHold here (condition, event once per version and reason, metrics, status).
  const report = new OscReporter(
    {
      ...deps,
      metrics: deps.metrics ?? noOscMetrics,
      ...(driftStatus !== undefined ? { conditionNote: () => driftConditionMessage(driftStatus) } : {}),
    },
    { namespace: "kube-system", name: deps.config.secretName },
  );
  const stager = deps.staging === undefined ? undefined : new Stager({ ...deps, ...deps.staging });
  const shrinker = new HeapShrinker(deps);
  let applyStage: Promise<ApplyStage> | undefined;
  const loadApplyStage = () =>
    (applyStage ??= import("./reconcile-apply.ts").then(({ createApplyStage }) => createApplyStage(deps, { report, stager, shrinker })));
  return async (key, signal) => {
    const { log, events } = deps;

    // Steps 1-7: the Secret, the Node, the decoded OSC; the label patch starts.
    const input = await readInput(deps, key, signal);
    if (input.kind === "missing") return report.secretMissing(input.node, signal);
    if (input.kind === "rejected") {
      if (input.node !== undefined) await events.event(nodeRef(input.node), "Warning", "OSCApplyFailed", "Reconcile", errorText(input.err));
      await report.rejected(input.node, input.checksum, input.err, signal);
      throw input.thrown;
    }
    const { checksum, node, labels } = input;

    // 8. Up to date: the Node has the checksum and no earlier attempt left work behind.
    if (await upToDate(deps.host, input)) {
      await stager?.settle(checksum);
      await labels.done();
      log.info("Node is up to date with the operating system config", { checksum });
      await report.upToDate(node, checksum, signal);
      return {};
    }

    // 8a-16: stage, gates, apply, record.
    return (await loadApplyStage())(input, signal);
  };
}
