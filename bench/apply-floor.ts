// The syscall floor of an OSC apply (issue 25), run by apply-latency.bench.ts as a process of its own
// (like the agent, so its blocking calls never stall the systemd double in the bench process).
//
// What it does per line "<generation>" on stdin: exactly the file-system mutations and D-Bus calls that
// `strace -f -p <agent>` showed for one update of the bench's OSC (every file's content changed, unit
// files unchanged), in the agent's order, and nothing else — no API server, no parsing, no reads, no
// diff. Traced on the compiled agent (50 and 1000 files, 10 units):
//   1. apply-status.json: temp (O_EXCL, 0600), write, rename;
//   2. the changes record's temp, then per file a temp beside the target
//      (open O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC 0644, write, close);
//   3. ONE syncfs on the file system (instead of an fsync per temp);
//   4. rename of the changes record, then per file: open the replaced file O_RDONLY (held so that freeing
//      its blocks is not waited for inside the rename), rename temp → target; the held descriptors are
//      closed later, off the critical path;
//   5. fsync of the 10 parent directories and the state directory (the entries' durability);
//   6. D-Bus: EnableUnitFiles(10 units, runtime=false, force=true) with Reload sent right behind it,
//      both awaited; then the 10 RestartUnit(unit, "replace") at once, each awaited until its JobRemoved;
//   7. after each restart: the changes record (temp 0600, fchmod, write, fsync, close, rename, fsync of
//      the state directory); at the end last-applied-osc.yaml (the same) and apply-status.json.
// It answers "done" once all of it finished. The bench times it like the agent: from the trigger to the
// last RestartUnit arriving at the systemd double.
//
// Why it is a floor: it is the same work with no decision made at all, on one already open D-Bus
// connection with the match rule and Subscribe done before the clock starts. The file calls come in three
// forms, chosen by --impl: node:fs synchronous calls (`fs`, one JS → libc hop each), libc through bun:ffi
// (`ffi`), or `parallel`: the temps written by node:fs/promises writeFile 32 at a time on the thread
// pool as the agent does (on a churned ext4 creating a file costs 0.5-1 ms and overlapping creates wins:
// measured 1000 files 600-900 ms in a row vs ~250 ms for the agent), the rest as `fs`. The bench runs
// all three and takes the lowest median, so the floor is never a slower way of making the same calls.
//
// The calls themselves are `openApplyFloor`, which bench/apply-job-floor.ts imports, so the job floor's
// file-system and D-Bus part is this code; run as a script, this file is the syscall floor.
import { close, closeSync, constants, fchmodSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { Message, sessionBus } from "dbus-next";

/** The three forms of the file calls (see the header). */
export type FloorImpl = "fs" | "ffi" | "parallel";
export const floorImpls: readonly FloorImpl[] = ["fs", "ffi", "parallel"];

/** One file of an apply: its temp goes beside the target in `dir`. */
export interface FloorFile {
  readonly dir: string;
  readonly name: string;
  readonly data: Uint8Array;
  readonly mode: number;
  /** A file is already at the target (its old inode is held open across the rename). */
  readonly replaces: boolean;
}

export interface FloorApply {
  readonly generation: number;
  readonly files: readonly FloorFile[];
  /** The directories whose entries changed (fsynced after the renames). */
  readonly parents: readonly string[];
  /** EnableUnitFiles' list, and the units restarted (each awaited to its JobRemoved). */
  readonly enable: readonly string[];
  readonly restart: readonly string[];
  /** last-applied-osc.yaml's content (the syscall floor's is one line; written after the restarts). */
  readonly lastApplied: Uint8Array;
  /** Called with "written" after the renames and directory fsyncs, "restarts sent" once every RestartUnit is out. */
  readonly mark?: (what: string) => void;
}

/** The syscall floor's calls on one open D-Bus connection, with `root`'s state directory. */
export interface ApplyFloor {
  apply(a: FloorApply): Promise<void>;
  close(): void;
}

/** The few file calls the floor makes; one implementation per --impl. */
interface Sys {
  open(path: string, flags: number, mode: number): number;
  write(fd: number, data: Uint8Array): void;
  close(fd: number): void;
  fsync(fd: number): void;
  fchmod(fd: number, mode: number): void;
  rename(from: string, to: string): void;
  syncfs(fd: number): void;
}

const ffiSys = async (): Promise<Sys> => {
  const ffi = await import("bun:ffi");
  const libc = ffi.dlopen("libc.so.6", {
    open: { args: [ffi.FFIType.ptr, ffi.FFIType.i32, ffi.FFIType.u32], returns: ffi.FFIType.i32 },
    write: { args: [ffi.FFIType.i32, ffi.FFIType.ptr, ffi.FFIType.u64], returns: ffi.FFIType.i64 },
    close: { args: [ffi.FFIType.i32], returns: ffi.FFIType.i32 },
    fsync: { args: [ffi.FFIType.i32], returns: ffi.FFIType.i32 },
    fchmod: { args: [ffi.FFIType.i32, ffi.FFIType.u32], returns: ffi.FFIType.i32 },
    rename: { args: [ffi.FFIType.ptr, ffi.FFIType.ptr], returns: ffi.FFIType.i32 },
    syncfs: { args: [ffi.FFIType.i32], returns: ffi.FFIType.i32 },
  });
  const ok = (what: string, r: number | bigint): number => {
    if (Number(r) < 0) throw new Error(`apply-floor: ${what} failed`);
    return Number(r);
  };
  const cstr = (s: string) => Buffer.from(`${s}\0`);
  return {
    open: (p, flags, mode) => ok(`open ${p}`, libc.symbols.open(cstr(p), flags, mode)),
    write: (fd, data) => void ok("write", libc.symbols.write(fd, data, data.byteLength)),
    close: (fd) => void ok("close", libc.symbols.close(fd)),
    fsync: (fd) => void ok("fsync", libc.symbols.fsync(fd)),
    fchmod: (fd, mode) => void ok("fchmod", libc.symbols.fchmod(fd, mode)),
    rename: (a, b) => void ok(`rename ${a}`, libc.symbols.rename(cstr(a), cstr(b))),
    syncfs: (fd) => void ok("syncfs", libc.symbols.syncfs(fd)),
  };
};
const nodeFsSys = (viaFfi: Sys): Sys => ({
  open: (p, flags, mode) => openSync(p, flags, mode),
  write: (fd, data) => void writeSync(fd, data),
  close: (fd) => closeSync(fd),
  fsync: (fd) => fsyncSync(fd),
  fchmod: (fd, mode) => fchmodSync(fd, mode),
  rename: (a, b) => renameSync(a, b),
  // node:fs has no syncfs: libc's, as the agent calls it (src/host/syncfs.ts).
  syncfs: viaFfi.syncfs,
});
/** Temps in flight at once with --impl=parallel: the agent's number (src/host/write-group.ts). */
const PARALLEL = 32;

const TEMP = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | 0o2000000; // O_CLOEXEC
const HOLD = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | 0o2000000;
const DIR = constants.O_RDONLY | constants.O_DIRECTORY | 0o2000000;
const enc = new TextEncoder();

/** Opens the D-Bus connection (match rule and Subscribe done) and the file calls of `impl`. */
export async function openApplyFloor(root: string, busAddress: string, impl: FloorImpl): Promise<ApplyFloor> {
  const viaFfi = await ffiSys();
  const sys = impl === "ffi" ? viaFfi : nodeFsSys(viaFfi);
  const stateDir = `${root}/var/lib/gardener-node-agent`;
  mkdirSync(stateDir, { recursive: true });
  let tempSeq = 0;
  const tempFor = (dir: string, name: string) => `${dir}/.${name}.tmp-${(++tempSeq).toString(16).padStart(12, "0")}`;

  const fsyncDir = (dir: string) => {
    const fd = sys.open(dir, DIR, 0);
    sys.fsync(fd);
    sys.close(fd);
  };
  /** A state file as the agent writes it outside a group: temp, fchmod, write, fsync, rename, fsync of the directory. */
  const writeDurable = (name: string, data: Uint8Array) => {
    const temp = tempFor(stateDir, name);
    const fd = sys.open(temp, TEMP, 0o600);
    sys.fchmod(fd, 0o600);
    sys.write(fd, data);
    sys.fsync(fd);
    sys.close(fd);
    sys.rename(temp, `${stateDir}/${name}`);
    fsyncDir(stateDir);
  };
  /** apply-status.json: not fsynced (a status, not a record). */
  const writeStatus = (text: string) => {
    const temp = tempFor(stateDir, "apply-status.json");
    const fd = sys.open(temp, TEMP, 0o600);
    sys.write(fd, enc.encode(text));
    sys.close(fd);
    sys.rename(temp, `${stateDir}/apply-status.json`);
  };

  const bus = sessionBus({ busAddress });
  const call = async (member: string, signature = "", body: unknown[] = [], destination = "org.freedesktop.systemd1") => {
    const path = destination === "org.freedesktop.DBus" ? "/org/freedesktop/DBus" : "/org/freedesktop/systemd1";
    const iface = destination === "org.freedesktop.DBus" ? "org.freedesktop.DBus" : "org.freedesktop.systemd1.Manager";
    const reply = await bus.call(new Message({ destination, path, interface: iface, member, signature, body }));
    return reply?.body ?? [];
  };
  const jobWaiters = new Map<string, () => void>();
  const removedEarly = new Set<string>();
  bus.on("message", (msg: Message) => {
    if (msg.member !== "JobRemoved") return;
    const job = String((msg.body as unknown[])[1]);
    const w = jobWaiters.get(job);
    if (w === undefined) removedEarly.add(job);
    else {
      jobWaiters.delete(job);
      w();
    }
  });
  await call(
    "AddMatch",
    "s",
    [
      "type='signal',sender='org.freedesktop.systemd1',path='/org/freedesktop/systemd1',interface='org.freedesktop.systemd1.Manager',member='JobRemoved'",
    ],
    "org.freedesktop.DBus",
  );
  await call("Subscribe");

  const restart = async (unit: string, onDone: () => void) => {
    const [job] = await call("RestartUnit", "ss", [unit, "replace"]);
    const path = String(job);
    if (!removedEarly.delete(path)) await new Promise<void>((resolve) => jobWaiters.set(path, resolve));
    onDone();
  };

  async function apply(a: FloorApply): Promise<void> {
    const { generation } = a;
    writeStatus(`{"generation":${generation},"phase":"applying"}`);
    const changesTemp = tempFor(stateDir, "last-computed-osc-changes.yaml");
    const cfd = sys.open(changesTemp, TEMP, 0o600);
    sys.write(cfd, enc.encode(`generation: ${generation}\n`));
    sys.close(cfd);
    const staged = a.files.map((f) => ({ ...f, temp: tempFor(f.dir, f.name), target: `${f.dir}/${f.name}` }));
    if (impl === "parallel") {
      // One open+write+close per temp on the thread pool, PARALLEL at a time, as the agent does.
      let next = 0;
      const worker = async () => {
        while (next < staged.length) {
          const s = staged[next++] as (typeof staged)[number];
          await writeFile(s.temp, s.data, { flag: TEMP, mode: s.mode });
        }
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL, staged.length) }, worker));
    } else {
      for (const s of staged) {
        const fd = sys.open(s.temp, TEMP, s.mode);
        sys.write(fd, s.data);
        sys.close(fd);
      }
    }
    const sfd = sys.open(stateDir, DIR, 0);
    sys.syncfs(sfd);
    sys.close(sfd);
    sys.rename(changesTemp, `${stateDir}/last-computed-osc-changes.yaml`);
    const held: number[] = [];
    for (const s of staged) {
      if (s.replaces) held.push(sys.open(s.target, HOLD, 0));
      sys.rename(s.temp, s.target);
    }
    for (const dir of a.parents) fsyncDir(dir);
    fsyncDir(stateDir);
    a.mark?.("written");
    await Promise.all([call("EnableUnitFiles", "asbb", [a.enable, false, true]), call("Reload")]);
    const restarts = a.restart.map((u) =>
      restart(u, () => writeDurable("last-computed-osc-changes.yaml", enc.encode(`generation: ${generation}\ndone: ${u}\n`))),
    );
    a.mark?.("restarts sent");
    // The replaced files' last references, on the thread pool behind the restarts (as the agent does).
    for (const fd of held) close(fd, () => undefined);
    await Promise.all(restarts);
    writeDurable("last-applied-osc.yaml", a.lastApplied);
    writeStatus(`{"generation":${generation},"phase":"applied"}`);
  }

  return { apply, close: () => bus.disconnect() };
}

/** The syscall floor as a process of its own: argv --root, --bus, --files, --units, --impl; one apply per stdin line. */
async function main(): Promise<void> {
  const arg = (name: string): string => {
    const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
    if (hit === undefined) throw new Error(`apply-floor: --${name}= is required`);
    return hit.slice(name.length + 3);
  };
  const root = arg("root");
  const files = Number(arg("files"));
  const unitCount = Number(arg("units"));
  const impl = arg("impl");
  if (!floorImpls.includes(impl as FloorImpl)) throw new Error(`apply-floor: --impl must be one of ${floorImpls.join(", ")}`);
  const dirOf = (u: number) => `${root}/etc/bench/${u}`;
  const units = Array.from({ length: unitCount }, (_, u) => `bench-${u}.service`);
  const parents = units.map((_, u) => dirOf(u));
  for (const dir of parents) mkdirSync(dir, { recursive: true });
  const floor = await openApplyFloor(root, arg("bus"), impl as FloorImpl);
  process.stdout.write("ready\n");
  for await (const line of console) {
    const generation = Number(line.trim());
    if (!Number.isFinite(generation)) break;
    const staged = Array.from({ length: files }, (_, f) => ({
      dir: dirOf(f % unitCount),
      name: `file-${f}.conf`,
      data: enc.encode(`generation ${generation} file ${f}\n`),
      mode: 0o644,
      replaces: generation > 0, // generation 0 creates the files
    }));
    await floor.apply({
      generation,
      files: staged,
      parents,
      enable: units,
      restart: units,
      lastApplied: enc.encode(`generation: ${generation}\n`),
    });
    process.stdout.write("done\n");
  }
  floor.close();
}

if (import.meta.main) await main();
