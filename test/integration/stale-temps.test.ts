// Temp files of atomic writes that a kill left behind (issue 10 item 3): the compiled agent removes
// its own (`.<name>.tmp-<12 hex>`) in the directories it writes, at start and before each apply, and
// nothing else: not a look-alike, not a temp-named file in a directory it never writes.
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useSandbox } from "../harness/sandbox-hooks.ts";
import { eventually } from "../harness/eventually.ts";

const osc = (greeting: string) => `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  units:
  - name: greeter.service
    content: "[Service]\\nType=oneshot\\nExecStart=/bin/true\\n"
    dropIns:
    - name: 10-env.conf
      content: "[Service]\\nEnvironment=A=1\\n"
  files:
  - path: /etc/demo/greeting.txt
    permissions: 0644
    content: {inline: {data: "${greeting}\\n"}}
`;

const startSandbox = useSandbox();

test("the agent removes its own stale temp files at start and before an apply, and nothing else", async () => {
  const sb = await startSandbox({ nodeName: "temps-worker" });
  const at = (p: string) => join(sb.root, p);
  const plant = (p: string) => {
    mkdirSync(at(p.slice(0, p.lastIndexOf("/"))), { recursive: true });
    writeFileSync(at(p), "left over by a kill");
  };
  const first = sb.spawnAgent();
  await sb.waitForApplied(sb.setOsc(osc("hello")));
  await first.stop();

  const stale = [
    "/etc/systemd/system/.greeter.service.tmp-0123456789ab",
    "/etc/systemd/system/greeter.service.d/.10-env.conf.tmp-a1b2c3d4e5f6",
    "/etc/demo/.greeting.txt.tmp-ffffffffffff",
    "/var/lib/gardener-node-agent/.last-applied-osc.yaml.tmp-00aa11bb22cc",
  ];
  const kept = [
    "/etc/demo/.greeting.txt.tmp-backup",
    "/etc/demo/.notes.tmp-0123456789AB",
    "/etc/demo/notes.tmp-0123456789ab",
    "/etc/systemd/system/.other.service.tmp",
    "/srv/data/.db.tmp-0123456789ab", // a directory the agent never writes
  ];
  for (const p of [...stale, ...kept]) plant(p);

  // At start, with nothing to apply.
  const second = sb.spawnAgent();
  await eventually("the start-up clean-up", () => stale.every((p) => !existsSync(at(p))), { timeoutMs: 20_000 });
  for (const p of kept) expect(existsSync(at(p))).toBe(true);
  expect(await sb.readHostFile("/etc/demo/greeting.txt")).toBe("hello\n");

  // Before an apply: a temp appears while the agent runs (another writer was killed meanwhile).
  plant("/etc/demo/.greeting.txt.tmp-abcdefabcdef");
  await sb.waitForApplied(sb.setOsc(osc("bonjour")));
  await second.stop();
  expect(existsSync(at("/etc/demo/.greeting.txt.tmp-abcdefabcdef"))).toBe(false);
  expect(await sb.readHostFile("/etc/demo/greeting.txt")).toBe("bonjour\n");
  for (const p of kept) expect(existsSync(at(p))).toBe(true);
  expect(second.output()).toContain("Removed stale temporary file");
}, 90_000);
