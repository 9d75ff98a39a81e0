import { afterEach, describe, expect, test } from "bun:test";
import { nopLogger } from "../log/logger.ts";
import { FakeClock } from "../../test/doubles/fake-clock.ts";
import { executableCodeRanges, libcDropPages, releaseCodePages, releaseCodePagesAfter } from "./code-pages.ts";
import type { CodeRange, DropPages } from "./code-pages.ts";

const maps = [
  "00200000-01a39000 r--p 00000000 fe:00 338944                             /usr/bin/agent",
  "01a40000-06849000 r-xp 01838000 fe:00 338944                             /usr/bin/agent",
  "0684a000-06aac000 rw-p 06649000 fe:00 338944                             /usr/bin/agent",
  "06aac000-06ab0000 rw-p 00000000 00:00 0 ",
  "7f4ba42f7000-7f4ba42f8000 r-xp 00026000 fe:00 12345                      /usr/lib/x86_64-linux-gnu/libc.so.6",
  "7f4ba4300000-7f4ba4310000 r-xp 00000000 00:00 0 ",
  "7ffd1b3fe000-7ffd1b400000 r-xp 00000000 00:00 0                          [vdso]",
  "",
].join("\n");

const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
});

const recorder = (ok = true): { drop: DropPages; seen: CodeRange[][] } => {
  const seen: CodeRange[][] = [];
  return { seen, drop: async (ranges) => (seen.push([...ranges]), ok ? ranges.length : 0) };
};

describe("executableCodeRanges", () => {
  test("should pick only the executable's read+execute mappings", () => {
    expect(executableCodeRanges(maps, "/usr/bin/agent")).toEqual([{ start: 0x1a40000n, length: 0x6849000n - 0x1a40000n }]);
  });

  test("should find nothing for another executable", () => {
    expect(executableCodeRanges(maps, "/usr/bin/other")).toEqual([]);
  });
});

describe("releaseCodePages", () => {
  test("should drop every code range of the executable", async () => {
    const { drop, seen } = recorder();
    const outcome = await releaseCodePages({ readMaps: async () => maps, exePath: "/usr/bin/agent", dropPages: drop });
    expect(outcome).toEqual({ released: 1, failed: 0 });
    expect(seen).toEqual([[{ start: 0x1a40000n, length: 0x6849000n - 0x1a40000n }]]);
  });

  test("should count ranges madvise refused", async () => {
    const outcome = await releaseCodePages({ readMaps: async () => maps, exePath: "/usr/bin/agent", dropPages: recorder(false).drop });
    expect(outcome).toEqual({ released: 0, failed: 1 });
  });

  test("should report unsupported when the executable has no code mapping", async () => {
    const { drop, seen } = recorder();
    expect(await releaseCodePages({ readMaps: async () => maps, exePath: "/nope", dropPages: drop })).toBe("unsupported");
    expect(seen).toEqual([]);
  });

  test("should report unsupported when madvise is not available", async () => {
    const outcome = await releaseCodePages({ readMaps: async () => maps, exePath: "/usr/bin/agent", dropPages: async () => undefined });
    expect(outcome).toBe("unsupported");
  });

  test("should release the running process's own code pages and keep it running", async () => {
    const ownMaps = await Bun.file("/proc/self/maps").text();
    const outcome = await releaseCodePages({ readMaps: async () => ownMaps, exePath: process.execPath, dropPages: libcDropPages() });
    expect(outcome).toEqual({ released: executableCodeRanges(ownMaps, process.execPath).length, failed: 0 });
    // Code runs on after its pages were unmapped: they come back from the page cache.
    expect(JSON.parse(JSON.stringify({ still: "running" }))).toEqual({ still: "running" });
  });
});

describe("releaseCodePagesAfter", () => {
  const setup = () => {
    const clock = new FakeClock();
    const { drop, seen } = recorder();
    const stop = new AbortController();
    controllers.push(stop);
    const deps = { readMaps: async () => maps, exePath: "/usr/bin/agent", dropPages: drop, clock, log: nopLogger };
    return { clock, seen, stop, deps };
  };

  test("should release the pages once the delay has passed", async () => {
    const { clock, seen, stop, deps } = setup();
    const done = releaseCodePagesAfter(20_000, deps, stop.signal);
    clock.step(19_999);
    await clock.settle();
    expect(seen).toEqual([]);
    clock.step(1);
    await done;
    expect(seen.length).toBe(1);
  });

  test("should release nothing when the agent stops first", async () => {
    const { seen, stop, deps } = setup();
    const done = releaseCodePagesAfter(20_000, deps, stop.signal);
    stop.abort(new Error("stopping"));
    await done;
    expect(seen).toEqual([]);
  });

  test("should log, not throw, when reading the mappings fails", async () => {
    const { clock, stop, deps } = setup();
    const logged: string[] = [];
    const log = { ...nopLogger, info: (msg: string) => void logged.push(msg) };
    const failing = { ...deps, log, readMaps: () => Promise.reject(new Error("EACCES")) };
    const done = releaseCodePagesAfter(0, failing, stop.signal);
    clock.step(0);
    await done;
    expect(logged).toEqual(["Could not release start-up code pages"]);
  });
});
