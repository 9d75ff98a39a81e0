import { errorText } from "../log/index.ts";
/**
 * A tiny task graph: each task runs once all its dependencies succeeded; a failed task skips its
 * dependents; tasks without an order between them run in parallel; every error is kept.
 */
export interface Task {
  readonly name: string;
  readonly dependsOn: readonly string[];
  run(signal: AbortSignal): Promise<void>;
}

export type TaskOutcome = "succeeded" | "failed" | "skipped";

/** Progress lines (stderr): one when a task starts and one when it ends. */
export interface TaskReporter {
  started(task: string): void;
  finished(task: string, outcome: TaskOutcome, err?: unknown): void;
}

/** One or more tasks failed; `errors` holds each task's error, in the order they happened. */
export class TaskGraphError extends Error {
  override readonly name = "TaskGraphError";
  constructor(readonly errors: readonly { readonly task: string; readonly error: unknown }[]) {
    super(
      `${errors.length} error${errors.length === 1 ? "" : "s"} occurred: ${errors
        .map((e) => `task "${e.task}" failed: ${errorText(e.error)}`)
        .join("; ")}`,
    );
  }
}

/** Runs the graph; throws TaskGraphError when any task failed. */
export async function runTasks(tasks: readonly Task[], reporter: TaskReporter, signal: AbortSignal): Promise<void> {
  const byName = new Map(tasks.map((t) => [t.name, t]));
  for (const t of tasks) {
    for (const d of t.dependsOn)
      if (!byName.has(d)) throw new Error(`task ${JSON.stringify(t.name)} depends on unknown task ${JSON.stringify(d)}`);
  }
  const errors: { task: string; error: unknown }[] = [];
  const done = new Map<string, Promise<TaskOutcome>>();
  const outcomeOf = (t: Task): Promise<TaskOutcome> => {
    const known = done.get(t.name);
    if (known !== undefined) return known;
    const p = (async (): Promise<TaskOutcome> => {
      const deps = await Promise.all(t.dependsOn.map((d) => outcomeOf(byName.get(d) as Task)));
      if (deps.some((o) => o !== "succeeded") || signal.aborted) {
        reporter.finished(t.name, "skipped");
        return "skipped";
      }
      reporter.started(t.name);
      try {
        await t.run(signal);
      } catch (error) {
        errors.push({ task: t.name, error });
        reporter.finished(t.name, "failed", error);
        return "failed";
      }
      reporter.finished(t.name, "succeeded");
      return "succeeded";
    })();
    done.set(t.name, p);
    return p;
  };
  await Promise.all(tasks.map(outcomeOf));
  if (errors.length > 0) throw new TaskGraphError(errors);
}
