// Sums CPU profiles in Chrome's JSON format (Bun's --cpu-prof; the fleet-rollout and idle-cpu-ab benches write
// them) by sample count, one sample per interval the thread was busy. Bun's --cpu-prof-md times add the idle gap
// before each sample to it, so its Self/Total columns overstate whatever ran just before a wait.
//   bun run bench/profile-summary.ts [--top N] [--under 'name file:line:col'] profile.cpuprofile ...
// Prints the busy samples, the top functions by self and by inclusive samples (a function once per sample however
// deep it recurs), and with --under the three frames below that function, by samples.
import { readFileSync } from "node:fs";

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number };
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
}

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args.splice(at, 2)[1];
};
const top = Number(option("--top") ?? 40);
const under = option("--under");
if (args.length === 0) {
  console.error("usage: bun run bench/profile-summary.ts [--top N] [--under 'name file:line:col'] profile.cpuprofile ...");
  process.exit(2);
}

const frameName = (n: ProfileNode): string => {
  const f = n.callFrame;
  return `${f.functionName || "(anonymous)"} ${f.url.split("/").at(-1) ?? ""}:${f.lineNumber}:${f.columnNumber}`;
};
const notBusy = new Set(["(root)", "(idle)", "(program)", "(garbage collector)"]);

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const below = new Map<string, number>();
const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
let busy = 0;
for (const file of args) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stacks = new Map<number, string[]>(); // root first
  const stackOf = (id: number): string[] => {
    let s = stacks.get(id);
    if (s === undefined) {
      s = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const n = byId.get(at);
        if (n !== undefined) s.push(frameName(n));
      }
      s.reverse();
      stacks.set(id, s);
    }
    return s;
  };
  for (const id of profile.samples) {
    const node = byId.get(id);
    if (node === undefined || notBusy.has(node.callFrame.functionName)) continue;
    busy++;
    const stack = stackOf(id);
    add(self, frameName(node));
    for (const f of new Set(stack)) if (!notBusy.has(f.slice(0, f.indexOf(" ")))) add(inclusive, f);
    const at = under === undefined ? -1 : stack.indexOf(under);
    if (at >= 0) add(below, stack.slice(at + 1, at + 4).join(" > ") || "(self)");
  }
}

const print = (title: string, m: Map<string, number>) => {
  console.log(`== ${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${String(v).padStart(7)} ${((100 * v) / Math.max(1, busy)).toFixed(1).padStart(5)} %  ${k}`);
};
console.log(`${busy} busy samples in ${args.length} profile(s)`);
print("self", self);
print("inclusive", inclusive);
if (under !== undefined) print(`below ${under}`, below);
