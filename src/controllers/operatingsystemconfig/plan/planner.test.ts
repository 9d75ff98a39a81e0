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

/** A small OSC (kept whole in last-applied's memo) with units, drop-ins and files; `generation` changes some of them. */
const smallOsc = (generation: number): Osc =>
  decodeOsc(
    [
      "spec:",
      "  units:",
      "  - name: a.service",
      `    content: "[Service]\\nExecStart=/bin/a ${generation}\\n"`,
      "    dropIns:",
      "    - name: 10-x.conf",
      `      content: "[Service]\\nEnvironment=G=${generation % 2}\\n"`,
      "    filePaths: [/etc/a/one]",
      "  - name: b.service",
      '    content: "[Service]\\nExecStart=/bin/b\\n"',
      "  files:",
      "  - path: /etc/a/one",
      "    permissions: 420",
      `    content: {inline: {data: "one ${generation}"}}`,
      ...(generation === 0 ? ["  - path: /etc/a/gone", "    content: {inline: {data: gone}}"] : []),
      "  - path: /etc/a/same",
      "    content: {inline: {encoding: b64, data: c2FtZQ==}}",
      "",
    ].join("\n"),
  );

test.each([
  ["a small OSC", () => smallOsc(0), () => smallOsc(1)],
  ["a big OSC (digests)", () => bigOsc(new Map(), -1), () => bigOsc(new Map([[1, "QUJD"]]), 0)],
])("should plan the same after writing last-applied (remembered by its stamp) as after reading it back: %s", async (_, last, next) => {
  await writeLastApplied(host, last());
  const request = { osc: next(), checksum: "c2", hostName: "me", processPath: "/bin" };
  const remembered = await planChangeSet(host, request, [], "apply");
  // Another HostFs on the same root knows no stamp: it reads and decodes the file, as after a restart.
  const readBack = await planChangeSet(createHostFs(root), { ...request, osc: next() }, [], "apply");
  expect(remembered.changes.files.changed.length + remembered.changes.units.changed.length).toBeGreaterThan(0);
  expect(remembered.changes).toEqual(readBack.changes);
  expect(remembered.lastApplied).toEqual(readBack.lastApplied as NonNullable<typeof readBack.lastApplied>);
  expect(remembered.resumed).toBe(readBack.resumed);
});
