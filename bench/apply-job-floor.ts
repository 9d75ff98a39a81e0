// The job floor of an OSC apply (issue 25): the apply's whole job written against Bun's own API with none
// of the agent's code, compiled by the same Bun (`bun build --compile`) and run by apply-latency.bench.ts
// like the agent — spawned on a sandbox's --root, against the same API-server simulator with the same
// client certificate and CA (the root's kubeconfig and cluster-ca.crt), and the same systemd double — so
// the gap from the syscall floor (bench/apply-floor.ts) to this is what ANY Bun program doing the job
// pays, and the gap from this to the agent is the agent's own.
//
// What it does:
//   - at start: reads the kubeconfig (Bun.YAML), LISTs the OSC Secret by field selector over TLS, applies
//     it, then WATCHes it from the list's resourceVersion (allowWatchBookmarks, as the agent) with fetch's
//     streaming body: chunks decoded into newline-separated JSON events, each JSON.parse'd; a watch that
//     ends is reopened from the last resourceVersion;
//   - per event whose osc.yaml changed: Buffer base64 decode of osc.yaml, Bun.YAML.parse of the OSC, each
//     file's content decoded as its inline encoding says (b64/base64 through Buffer, plain as UTF-8), unit
//     files at /etc/systemd/system/<name>; what changed is decided against what it wrote last (kept in
//     memory: content bytes and mode per path); units restarted are those whose unit file or any of
//     whose filePaths changed;
//   - the writes and D-Bus calls through bench/apply-floor.ts's `openApplyFloor` (the syscall floor's own
//     code, --impl the form the bench found fastest there): progress records, temps (O_EXCL, the file's
//     mode), one syncfs, renames with the replaced files held open, parent-directory fsyncs,
//     EnableUnitFiles of every unit + daemon-reload, the restarts awaited to JobRemoved, a changes record
//     per restart, then last-applied-osc.yaml (here the OSC itself, as the agent keeps it) and the status.
// What it does not do (none of it is in the bench's timed window for the agent's path either, or it is
// the agent's own choice): no Node GET/PATCH (no checksum annotation, no events, no conditions: the bench
// waits for the floor's "applied" line instead), no rate limiter, no validation beyond what the job needs
// to read the fields, no drop-ins, no file content from anything but `inline`, no reads of the files on
// disk (the last written state is in memory), no logging, no metrics, no Lease. After each apply it runs
// a full collection (Bun.gc), outside the timed window, to keep its peak RSS a floor too.
//
// Per apply it prints one stdout line once everything is done: `applied <generation> <marks JSON>`, the
// marks being absolute times (performance.timeOrigin + performance.now(), ms) of: the event's first
// chunk, its last chunk, its JSON parsed, the OSC parsed (base64 + YAML), the change decided (contents decoded,
// compared), written (renames and directory fsyncs done) and restarts sent. Printed after the apply, so
// the printing is not in the timed window.
import { mkdirSync } from "node:fs";
import { type FloorFile, type FloorImpl, floorImpls, openApplyFloor } from "./apply-floor.ts";

const arg = (name: string): string => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  if (hit === undefined) throw new Error(`apply-job-floor: --${name}= is required`);
  return hit.slice(name.length + 3);
};
const root = arg("root");
const secretName = arg("secret");
const impl = arg("impl");
if (!floorImpls.includes(impl as FloorImpl)) throw new Error(`apply-job-floor: --impl must be one of ${floorImpls.join(", ")}`);

const now = () => performance.timeOrigin + performance.now();

// The credentials the sandbox gives the agent: a kubeconfig with an inline client certificate and a CA path under --root.
interface Kubeconfig {
  clusters: { cluster: { server: string; "certificate-authority": string } }[];
  users: { user: { "client-certificate-data": string; "client-key-data": string } }[];
}
const kubeconfig = Bun.YAML.parse(await Bun.file(arg("kubeconfig")).text()) as Kubeconfig;
const cluster = kubeconfig.clusters[0]?.cluster;
const user = kubeconfig.users[0]?.user;
if (cluster === undefined || user === undefined) throw new Error("apply-job-floor: kubeconfig: no cluster or user");
const tls = {
  ca: await Bun.file(`${root}${cluster["certificate-authority"]}`).text(),
  cert: Buffer.from(user["client-certificate-data"], "base64").toString(),
  key: Buffer.from(user["client-key-data"], "base64").toString(),
};
const secretsUrl = `${cluster.server}/api/v1/namespaces/kube-system/secrets?fieldSelector=${encodeURIComponent(`metadata.name=${secretName}`)}`;

interface Secret {
  metadata: { resourceVersion: string };
  data?: Record<string, string>;
}
interface OscFile {
  path: string;
  permissions?: number;
  content: { inline?: { encoding?: string; data: string } };
}
interface OscUnit {
  name: string;
  content?: string;
  filePaths?: string[];
}
interface Osc {
  spec: { files?: OscFile[]; units?: OscUnit[] };
}

const floor = await openApplyFloor(root, arg("bus"), impl as FloorImpl);
/** What was written last per host path: bytes and mode. */
const written = new Map<string, { data: Uint8Array; mode: number }>();
const madeDirs = new Set<string>();
let lastOscBase64 = "";
let generation = 0;

const decodeContent = (f: OscFile): Buffer => {
  const inline = f.content.inline;
  if (inline === undefined) throw new Error(`apply-job-floor: ${f.path}: only inline content is supported`);
  const encoding = inline.encoding ?? "";
  return encoding === "b64" || encoding === "base64" ? Buffer.from(inline.data, "base64") : Buffer.from(inline.data);
};

async function applySecret(secret: Secret, marks: Record<string, number>): Promise<void> {
  const b64 = secret.data?.["osc.yaml"];
  if (b64 === undefined || b64 === lastOscBase64) return;
  const oscBytes = Buffer.from(b64, "base64");
  const osc = Bun.YAML.parse(oscBytes.toString()) as Osc;
  marks["parsed"] = now();
  const files: FloorFile[] = [];
  const changedPaths = new Set<string>();
  const parents = new Set<string>();
  const consider = (path: string, data: Uint8Array, mode: number) => {
    const before = written.get(path);
    if (before !== undefined && before.mode === mode && Buffer.compare(before.data, data) === 0) return;
    const slash = path.lastIndexOf("/");
    const dir = `${root}${path.slice(0, slash)}`;
    if (!madeDirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      madeDirs.add(dir);
    }
    files.push({ dir, name: path.slice(slash + 1), data, mode, replaces: before !== undefined });
    changedPaths.add(path);
    parents.add(dir);
    written.set(path, { data, mode });
  };
  const units = osc.spec.units ?? [];
  for (const u of units) if (u.content !== undefined) consider(`/etc/systemd/system/${u.name}`, Buffer.from(u.content), 0o644);
  for (const f of osc.spec.files ?? []) consider(f.path, decodeContent(f), f.permissions ?? 0o644);
  const restart = units
    .filter((u) => changedPaths.has(`/etc/systemd/system/${u.name}`) || (u.filePaths ?? []).some((p) => changedPaths.has(p)))
    .map((u) => u.name);
  marks["decided"] = now();
  await floor.apply({
    generation: generation++,
    files,
    parents: [...parents],
    enable: units.map((u) => u.name),
    restart,
    lastApplied: oscBytes,
    mark: (what) => (marks[what] = now()),
  });
  lastOscBase64 = b64;
  // A full collection after each apply, once the last restart is out (outside the timed window): what the
  // apply allocated is garbage now, and without it the heap it leaves raises the next apply's peak
  // (1000 files on /tmp, VmHWM after the schedule 67.5 against 82.4 MB, 2026-11-30).
  Bun.gc(true);
  process.stdout.write(`applied ${generation - 1} ${JSON.stringify(marks)}\n`);
}

const list = await fetch(secretsUrl, { tls });
if (list.status !== 200) throw new Error(`apply-job-floor: LIST secrets: HTTP ${list.status}`);
const listed = (await list.json()) as { metadata: { resourceVersion: string }; items: Secret[] };
let resourceVersion = listed.metadata.resourceVersion;
for (const s of listed.items) await applySecret(s, {});

/** One watch from `resourceVersion` until the server ends it; events applied one at a time, in order. */
async function watchOnce(): Promise<void> {
  const url = `${secretsUrl}&watch=true&allowWatchBookmarks=true&resourceVersion=${resourceVersion}`;
  const res = await fetch(url, { tls });
  if (res.status !== 200 || res.body === null) throw new Error(`apply-job-floor: WATCH secrets: HTTP ${res.status}`);
  const decoder = new TextDecoder();
  let buffered = "";
  let firstChunkAt = 0;
  for await (const chunk of res.body) {
    if (buffered === "") firstChunkAt = now();
    buffered += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const marks: Record<string, number> = { event: firstChunkAt, eventEnd: now() };
      const event = JSON.parse(buffered.slice(0, nl)) as { type: string; object: Secret };
      marks["json"] = now();
      buffered = buffered.slice(nl + 1);
      firstChunkAt = now();
      if (event.type === "ERROR") throw new Error(`apply-job-floor: watch error ${JSON.stringify(event.object)}`);
      resourceVersion = event.object.metadata.resourceVersion;
      if (event.type === "ADDED" || event.type === "MODIFIED") await applySecret(event.object, marks);
    }
  }
}

for (;;) await watchOnce();
