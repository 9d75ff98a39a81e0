import { describe, expect, test } from "bun:test";
import { SystemdJobError } from "../../../systemd/index.ts";
import { StepError } from "../../../log/index.ts";
import { describeFailure } from "./failure.ts";
import { FileApplyError } from "../apply/files.ts";
import { UnitCommandsError } from "../apply/units.ts";

describe("describeFailure", () => {
  test("should name the step and the file of a file error", () => {
    const err = new StepError(
      "failed applying changed files",
      new FileApplyError('cannot write "/etc/a": "/etc/.a.tmp" is a directory', "/etc/a"),
    );
    expect(describeFailure(err)).toEqual({
      step: "failed applying changed files",
      subject: "/etc/a",
      message: 'failed applying changed files: cannot write "/etc/a": "/etc/.a.tmp" is a directory',
    });
  });

  test("should name every failed unit of the unit commands", () => {
    const err = new StepError(
      "failed executing unit commands",
      new UnitCommandsError([new SystemdJobError("restart", "a.service", "failed"), new SystemdJobError("stop", "b.service", "timeout")]),
    );
    expect(describeFailure(err).subject).toBe("a.service, b.service");
  });

  test("should keep only the first line of an error from outside a step", () => {
    expect(describeFailure(new Error("one\ntwo"))).toEqual({ step: "", subject: "", message: "one" });
  });
});
