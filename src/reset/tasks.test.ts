import { describe, expect, test } from "bun:test";
import { runTasks, TaskGraphError, type Task, type TaskReporter } from "./tasks.ts";

const recorder = () => {
  const lines: string[] = [];
  const reporter: TaskReporter = {
    started: (t) => lines.push(`${t} started`),
    finished: (t, o) => lines.push(`${t} ${o}`),
  };
  return { lines, reporter };
};
const task = (name: string, dependsOn: string[], run: () => Promise<void> = async () => {}): Task => ({ name, dependsOn, run });
const signal = new AbortController().signal;

describe("runTasks", () => {
  test("should run a task only after its dependencies and the independent ones in parallel", async () => {
    const order: string[] = [];
    let releaseA!: () => void;
    const aBlocked = new Promise<void>((r) => (releaseA = r));
    const { reporter } = recorder();
    await runTasks(
      [
        task("first", [], async () => void order.push("first")),
        task("a", ["first"], async () => {
          order.push("a start");
          await aBlocked;
          order.push("a end");
        }),
        task("b", ["first"], async () => {
          order.push("b");
          releaseA();
        }),
      ],
      reporter,
      signal,
    );
    expect(order).toEqual(["first", "a start", "b", "a end"]);
  });

  test("should skip the dependents of a failed task and aggregate the errors of parallel ones", async () => {
    const { lines, reporter } = recorder();
    const err = await runTasks(
      [
        task("root", []),
        task("left", ["root"], () => Promise.reject(new Error("left broke"))),
        task("right", ["root"], () => Promise.reject(new Error("right broke"))),
        task("after-left", ["left"]),
      ],
      reporter,
      signal,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskGraphError);
    expect((err as TaskGraphError).errors.map((e) => e.task).sort()).toEqual(["left", "right"]);
    expect((err as Error).message).toStartWith("2 errors occurred: ");
    expect((err as Error).message).toContain('task "left" failed: left broke');
    expect(lines).toContain("after-left skipped");
    expect(lines).not.toContain("after-left started");
  });

  test("should refuse a dependency on an unknown task", async () => {
    const { reporter } = recorder();
    await expect(runTasks([task("a", ["nope"])], reporter, signal)).rejects.toThrow('task "a" depends on unknown task "nope"');
  });
});
