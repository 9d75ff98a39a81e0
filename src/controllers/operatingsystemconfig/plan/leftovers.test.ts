import { describe, expect, test } from "bun:test";
import { decodeOsc, emptyChanges, type Osc } from "../../../osc/index.ts";
import { computeChanges } from "./diff.ts";
import { resumeOrComputeWithLeftovers, withAttempts } from "./leftovers.ts";

const osc = (files: Record<string, string>, units: { name: string; content?: string; dropIns?: string[]; filePaths?: string[] }[]): Osc =>
  decodeOsc(
    JSON.stringify({
      spec: {
        files: Object.entries(files).map(([path, data]) => ({ path, content: { inline: { data } } })),
        units: units.map((u) => ({ ...u, dropIns: u.dropIns?.map((name) => ({ name, content: `[Service]\n# ${name}\n` })) })),
      },
    }),
  );

const good = osc({ "/etc/a.conf": "a" }, [{ name: "a.service", content: "[Service]\nExecStart=/a\n", filePaths: ["/etc/a.conf"] }]);
const broken = osc({ "/etc/a.conf": "broken", "/etc/new.conf": "n" }, [
  { name: "a.service", content: "[Service]\nExecStart=/a\n", dropIns: ["90-broken.conf"], filePaths: ["/etc/a.conf"] },
  { name: "new.service", content: "[Service]\nExecStart=/new\n" },
]);

/** The change set of `broken`, computed against `good` and persisted, that never finished. */
function unfinishedBroken() {
  const r = resumeOrComputeWithLeftovers(undefined, good, broken, "broken", "h");
  return r.changes;
}

describe("resumeOrComputeWithLeftovers", () => {
  test("should record what a fresh change set sets out to write", () => {
    const c = unfinishedBroken();
    expect(c.attemptedWrites).toEqual({
      files: [{ path: "/etc/a.conf" }, { path: "/etc/new.conf" }],
      units: [
        {
          name: "a.service",
          content: "[Service]\nExecStart=/a\n",
          dropIns: [{ name: "90-broken.conf", content: "[Service]\n# 90-broken.conf\n" }],
        },
        { name: "new.service", content: "[Service]\nExecStart=/new\n" },
      ],
    });
  });

  test("should remove and rewrite what an unfinished change set left when the next OSC is the good one again", () => {
    const { changes, resumed } = resumeOrComputeWithLeftovers(unfinishedBroken(), good, good, "good-again", "h");
    expect(resumed).toBe(false);
    // Upstream's computation sees no difference at all (gardener#10972).
    const upstream = computeChanges(good, good, "good-again", "h");
    expect(upstream.files.deleted).toEqual([]);
    expect(upstream.units.commands).toEqual([]);

    expect(changes.files.deleted.map((f) => f.path)).toEqual(["/etc/new.conf"]);
    expect(changes.files.changed.map((f) => f.path)).toEqual(["/etc/a.conf"]);
    expect(changes.units.deleted.map((u) => [u.name, u.content !== undefined])).toEqual([["new.service", true]]);
    expect(changes.units.changed.map((u) => [u.name, u.dropInsChanges.deleted.map((d) => d.name)])).toEqual([
      ["a.service", ["90-broken.conf"]],
    ]);
    expect(changes.units.commands).toEqual([{ name: "a.service", command: "restart" }]);
    // Still recorded until this apply completes: it may fail halfway too.
    expect(changes.attemptedWrites?.files.map((f) => f.path)).toEqual(["/etc/a.conf", "/etc/new.conf"]);
  });

  test("should remove leftovers of an unfinished first apply (no last-applied)", () => {
    const first = resumeOrComputeWithLeftovers(undefined, undefined, broken, "broken", "h").changes;
    const { changes } = resumeOrComputeWithLeftovers(first, undefined, good, "good", "h");
    expect(changes.files.deleted.map((f) => f.path)).toEqual(["/etc/new.conf"]);
    expect(changes.units.deleted.map((u) => u.name)).toEqual(["new.service"]);
    expect(changes.units.commands).toEqual([{ name: "a.service", command: "restart" }]);
  });

  test("should resume the same checksum as persisted, and take a Go-written set's pending work as attempted", () => {
    const persisted = emptyChanges("x");
    persisted.files.changed.push({ path: "/etc/p", content: { inline: { encoding: "", data: "p" } } });
    const { changes, resumed } = resumeOrComputeWithLeftovers(persisted, good, good, "x", "h");
    expect(resumed).toBe(true);
    expect(changes.attemptedWrites).toEqual({ files: [{ path: "/etc/p" }], units: [] });
  });

  test("should add nothing after a completed apply (the record was dropped)", () => {
    const done = emptyChanges("good");
    const { changes } = resumeOrComputeWithLeftovers(done, good, good, "good-2", "h");
    expect(changes.files.changed).toEqual([]);
    expect(changes.units.commands).toEqual([]);
  });
});

describe("withAttempts", () => {
  test("should merge units by name and union their drop-ins", () => {
    const c = emptyChanges("x");
    c.units.changed.push({ name: "u", dropIns: [{ name: "b", content: "2" }], dropInsChanges: { changed: [], deleted: [] } });
    expect(withAttempts({ files: [], units: [{ name: "u", content: "c", dropIns: [{ name: "a", content: "1" }] }] }, c).units).toEqual([
      {
        name: "u",
        content: "c",
        dropIns: [
          { name: "a", content: "1" },
          { name: "b", content: "2" },
        ],
      },
    ]);
  });
});
