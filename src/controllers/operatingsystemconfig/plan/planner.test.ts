import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs, type HostFs } from "../../../host/index.ts";
import { decodeOsc, type Osc } from "../../../osc/index.ts";
import { planChangeSet } from "./planner.ts";
import { readLastAppliedDigests, writeLastApplied } from "./state.ts";

let root: string;
let host: HostFs;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "planner-"));
  host = createHostFs(root);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Past bigTextChars as text (1,100 files of 4,000 base64 characters): last-applied keeps digests only. */
const bigOsc = (changedData: ReadonlyMap<number, string>, without: number): Osc =>
  decodeOsc(
    `spec:\n  files:\n${Array.from({ length: 1_100 }, (_, i) => i)
      .filter((i) => i !== without)
      .map(
        (i) =>
          `  - path: /f/${i}\n    content:\n      inline: {encoding: b64, data: ${changedData.get(i) ?? `A${String(i).padStart(4, "0")}`.repeat(800)}}\n`,
      )
      .join("")}`,
  );

test("should plan a re-apply against a big last-applied OSC's digests, recording deleted files with their content", async () => {
  await writeLastApplied(host, bigOsc(new Map(), -1));
  expect((await readLastAppliedDigests(host))?.spec.files?.[0]?.content.inline?.encoding).toBe("sha256");
  const planned = await planChangeSet(
    host,
    { osc: bigOsc(new Map([[1, "QUJD"]]), 0), checksum: "c2", hostName: "me", processPath: "/bin" },
    [],
    "apply",
  );
  expect(planned.changes.files.changed.map((f) => f.path)).toEqual(["/f/1"]);
  expect(planned.changes.files.deleted.map((f) => f.path)).toEqual(["/f/0"]);
  expect(planned.changes.files.deleted[0]?.content.inline).toEqual({ encoding: "b64", data: "A0000".repeat(800) });
});
