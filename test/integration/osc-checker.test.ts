import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { realClock } from "../../src/clock/index.ts";
import { decodeOsc } from "../../src/osc/index.ts";
import {
  checkedView,
  createOscCheckerEventRecorder,
  LastAppliedParseError,
  OscCheckerError,
  runOscChecker,
  type OscCheckerDeps,
} from "../../src/controllers/oscchecker/index.ts";
import { ApiError } from "../../src/kube/errors.ts";
import { CachedReader } from "../../src/kube/readers.ts";
import { nodes } from "../../src/kube/resources.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { quietLog as log, useControllerSandboxes } from "../harness/controller-sandbox.ts";

setDefaultTimeout(30_000);
type Plain = Record<string, any>;
const lastApplied = "/var/lib/gardener-node-agent/last-applied-osc.yaml";
const sha = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");

const env = useControllerSandboxes();
let agentCert: { certPem: string; keyPem: string };
beforeAll(async () => {
  agentCert = await env.sim.issueClientCert("gardener.cloud:node-agent:machine:osc-checker", ["gardener.cloud:node-agents"]);
});

/**
 * A start-up as the agent does it: the Node cache synced with the agent's own client certificate,
 * a temp --root, the systemd fake; `run()` is the checker with an osc-checker event recorder.
 */
async function agent(opts: { node?: boolean; loaded?: string[] } = {}) {
  const { sim } = env;
  const sb = await env.start({
    prefix: "osc-checker",
    hostIsNodeName: true,
    createNode: opts.node !== false,
    systemd: { units: (opts.loaded ?? []).map((name) => ({ name })), realClock: true },
    restConfig: {
      server: sim.url,
      caPem: sim.caPem,
      clientCertPem: agentCert.certPem,
      clientKeyPem: agentCert.keyPem,
      credentials: { kind: "none" },
    },
  });
  const { nodeName, host, kube, informers, fake: systemd } = sb;
  informers.informerFor<KubeObject>(nodes, "", { fieldSelector: `metadata.name=${nodeName}` });
  await sb.run();
  const events = createOscCheckerEventRecorder({ kube, clock: realClock, log, hostName: nodeName });
  return {
    host,
    systemd,
    run: () => runOscChecker({ nodes: new CachedReader(informers), nodeName, host, systemd, events, log }, sb.signal),
    runWith: (o: Partial<OscCheckerDeps>) =>
      runOscChecker({ nodes: new CachedReader(informers), nodeName, host, systemd, events, log, ...o }, sb.signal),
    writeLastApplied: (yaml: string) => host.writeFileAtomic(lastApplied, yaml, 0o600),
    events: () =>
      (sim.store.list("events", { namespace: "default" }) as Plain[])
        .filter((e) => e["involvedObject"]?.name === nodeName)
        .map((e) => ({
          type: e["type"],
          reason: e["reason"],
          message: e["message"],
          component: e["source"]?.component,
          kind: e["involvedObject"]?.kind,
        })),
  };
}

const fileOsc = `spec:
  files:
  - path: /etc/testfile
    permissions: 0644
    content:
      inline:
        data: test
`;

/** Upstream's test convention: lower-cased keys, so the drop-in is seen (the §7.6 quirk). */
const unitOsc = `spec:
  units:
  - name: test.service
    content: |
      [Unit]
      Description=test
    dropins:
    - name: 10-override.conf
      content: |
        [Service]
        Environment=A=b
`;
const unitContent = "[Unit]\nDescription=test\n";
const dropInContent = "[Service]\nEnvironment=A=b\n";

describe("OSC checker", () => {
  describe("scenario 27: nothing to check", () => {
    test("emits no events and lists no units when the Node does not exist", async () => {
      const a = await agent({ node: false });
      await a.writeLastApplied(fileOsc);
      await a.run();
      expect(a.events()).toEqual([]);
      expect(a.systemd.actions).toEqual([]);
    });

    test("emits no events when the Node exists but nothing was applied yet", async () => {
      const a = await agent();
      await a.run();
      expect(a.events()).toEqual([]);
      expect(a.systemd.actions).toEqual([]);
    });
  });

  describe("scenario 28: files", () => {
    test("reports an absent file as one FileMissing Warning on the Node from osc-checker", async () => {
      const a = await agent();
      await a.writeLastApplied(fileOsc);
      await a.run();
      expect(a.events()).toEqual([
        { type: "Warning", reason: "FileMissing", message: "File /etc/testfile is missing", component: "osc-checker", kind: "Node" },
      ]);
    });

    test("reports differing content as FileMismatch with both sums", async () => {
      const a = await agent();
      await a.writeLastApplied(fileOsc);
      await a.host.writeFileAtomic("/etc/testfile", "changed", 0o644);
      await a.run();
      expect(a.events().map((e) => [e.reason, e.message])).toEqual([
        ["FileMismatch", `File /etc/testfile mismatch: expected ${sha("test")}, actual ${sha("changed")}`],
      ]);
    });

    test("reports nothing when the file is as applied", async () => {
      const a = await agent();
      await a.writeLastApplied(fileOsc);
      await a.host.writeFileAtomic("/etc/testfile", "test", 0o644);
      await a.run();
      expect(a.events()).toEqual([]);
    });
  });

  describe("scenario 29: units and drop-ins", () => {
    test("reports a unit file absent from all three unit directories as UnitFileMissing", async () => {
      const a = await agent();
      await a.writeLastApplied(unitOsc);
      await a.run();
      expect(a.events().map((e) => [e.reason, e.message])).toEqual([["UnitFileMissing", "Unit file test.service is missing"]]);
    });

    test("reports different unit bytes as UnitMismatch and equal bytes not at all", async () => {
      const a = await agent();
      await a.writeLastApplied(unitOsc);
      await a.host.writeFileAtomic("/lib/systemd/system/test.service", "[Unit]\nDescription=old\n", 0o644);
      await a.host.writeFileAtomic("/lib/systemd/system/test.service.d/10-override.conf", dropInContent, 0o644);
      await a.run();
      expect(a.events().map((e) => [e.reason, e.message])).toEqual([["UnitMismatch", "Unit test.service content mismatch"]]);

      const b = await agent();
      await b.writeLastApplied(unitOsc);
      await b.host.writeFileAtomic("/etc/systemd/system/test.service", unitContent, 0o644);
      await b.host.writeFileAtomic("/etc/systemd/system/test.service.d/10-override.conf", dropInContent, 0o644);
      await b.run();
      expect(b.events()).toEqual([]);
    });

    test.each([
      ["absent", undefined, [["DropInMissing", "Drop-in 10-override.conf for unit test.service is missing"]]],
      ["different", "[Service]\n", [["DropInMismatch", "Drop-in 10-override.conf for unit test.service mismatch"]]],
      ["equal", dropInContent, []],
    ])("reports a drop-in that is %s accordingly", async (_what, content, want) => {
      const a = await agent();
      await a.writeLastApplied(unitOsc);
      await a.host.writeFileAtomic("/etc/systemd/system/test.service", unitContent, 0o644);
      if (content !== undefined) await a.host.writeFileAtomic("/etc/systemd/system/test.service.d/10-override.conf", content, 0o644);
      await a.run();
      expect(a.events().map((e) => [e.reason, e.message])).toEqual(want);
    });

    test("checks no drop-ins or dependencies in a file written with JSON field names, as upstream", async () => {
      const a = await agent({ loaded: ["gardener-node-agent.service"] });
      await a.writeLastApplied(`apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  units:
  - name: gardener-node-agent.service
    enable: true
    content: "[Unit]\\n"
    dropIns:
    - name: 10-x.conf
      content: x
    filePaths:
    - /opt/bin/gardener-node-agent
`);
      await a.host.writeFileAtomic("/etc/systemd/system/gardener-node-agent.service", "[Unit]\n", 0o644);
      await a.run();
      expect(a.events()).toEqual([]);
    });

    test("compares enable state with the loaded-unit list", async () => {
      const a = await agent({ loaded: ["loaded.service"] });
      await a.writeLastApplied(`spec:
  units:
  - name: loaded.service
    enable: false
  - name: unloaded.service
    enable: true
  - name: static.service
    enable: true
`);
      await a.host.writeFileAtomic("/etc/systemd/system/loaded.service", "[Install]\nWantedBy=multi-user.target\n", 0o644);
      await a.host.writeFileAtomic("/etc/systemd/system/unloaded.service", "[Install]\nWantedBy=multi-user.target\n", 0o644);
      await a.host.writeFileAtomic("/etc/systemd/system/static.service", "[Service]\nType=oneshot\n", 0o644);
      await a.run();
      // Two findings: one aggregated event naming both units.
      expect(a.events().map((e) => [e.reason, e.message])).toEqual([
        [
          "UnitEnableMismatch",
          "2 files or units differ from the last applied OSC (UnitEnableMismatch: 2): loaded.service, unloaded.service",
        ],
      ]);
      expect(a.systemd.actions.map((x) => x.action)).toEqual(["List"]);
    });
  });

  describe("many findings and an interrupted apply", () => {
    const manyFiles = (n: number) =>
      `spec:\n  files:\n${Array.from({ length: n }, (_, i) => `  - path: /etc/f${String(i).padStart(2, "0")}\n    content: {inline: {data: x}}\n`).join("")}`;

    test("reports 25 missing files as one event naming the first 20 and the count", async () => {
      const a = await agent();
      await a.writeLastApplied(manyFiles(25));
      await a.run();
      const named = Array.from({ length: 20 }, (_, i) => `/etc/f${String(i).padStart(2, "0")}`).join(", ");
      expect(a.events().map((e) => [e.type, e.reason, e.message])).toEqual([
        ["Warning", "FileMissing", `25 files or units differ from the last applied OSC (FileMissing: 25): ${named} and 5 more`],
      ]);
    });

    test("does not count files and units the last computed changes are about to write", async () => {
      const a = await agent();
      await a.writeLastApplied(
        `${manyFiles(3)}  units:\n  - name: pending.service\n    content: x\n  - name: gone.service\n    content: y\n`,
      );
      await a.host.writeFileAtomic(
        "/var/lib/gardener-node-agent/last-computed-osc-changes.yaml",
        `operatingSystemConfigChecksum: abc
files:
  changed:
  - path: /etc/f00
    content: {inline: {data: new}}
  deleted:
  - path: /etc/f01
    content: {inline: {data: x}}
units:
  changed:
  - name: pending.service
    content: z
  deleted:
  - name: gone.service
`,
        0o600,
      );
      await a.run();
      expect(a.events().map((e) => [e.reason, e.message])).toEqual([["FileMissing", "File /etc/f02 is missing"]]);
    });

    test("does not count files and units already as the OSC being applied says (an apply a restart interrupted)", async () => {
      const a = await agent();
      // The agent restarted itself mid-apply: new files written and recorded done, last-applied still old.
      await a.writeLastApplied(`${manyFiles(3)}  units:\n  - name: app.service\n    content: old\n`);
      await a.host.writeFileAtomic("/etc/f00", "new", 0o644);
      await a.host.writeFileAtomic("/etc/f01", "edited by hand", 0o644);
      await a.host.writeFileAtomic("/etc/f02", "x", 0o644);
      await a.host.writeFileAtomic("/etc/systemd/system/app.service", "new", 0o644);
      const target = `spec:
  files:
  - {path: /etc/f00, content: {inline: {data: new}}}
  - {path: /etc/f01, content: {inline: {data: new}}}
  - {path: /etc/f02, content: {inline: {data: x}}}
  units:
  - {name: app.service, content: new}
`;
      await a.runWith({ targetOsc: async () => checkedView(decodeOsc(target)) });
      const f01 = `File /etc/f01 mismatch: expected ${sha("x")}, actual ${sha("edited by hand")}`;
      expect(a.events().map((e) => [e.reason, e.message])).toEqual([["FileMismatch", f01]]);
    });

    test("names mixed reasons with their counts under one reason", async () => {
      const a = await agent();
      await a.writeLastApplied(`${manyFiles(1)}  units:\n  - name: test.service\n    content: x\n`);
      await a.run();
      expect(a.events().map((e) => [e.reason, e.message])).toEqual([
        ["OSCDrift", "2 files or units differ from the last applied OSC (FileMissing: 1, UnitFileMissing: 1): /etc/f00, test.service"],
      ]);
    });
  });

  describe("failures", () => {
    test("fails on a last-applied file that cannot be parsed", async () => {
      const a = await agent();
      await a.writeLastApplied("spec: [unclosed");
      await expect(a.run()).rejects.toThrow(LastAppliedParseError);
      expect(a.events()).toEqual([]);
    });

    test("fails when the unit list cannot be read", async () => {
      const a = await agent();
      await a.writeLastApplied(fileOsc);
      a.systemd.failNextCall("List", "bus gone");
      const err = await a.run().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OscCheckerError);
      expect((err as Error).message).toBe("failed listing systemd units: bus gone");
      expect(a.events()).toEqual([]);
    });

    test("fails when the Node cannot be read for another reason than NotFound", async () => {
      const a = await agent();
      await a.writeLastApplied(fileOsc);
      const broken = {
        get: () => Promise.reject(new ApiError(500, "InternalError", "etcd down")),
        list: () => Promise.reject(new Error("unused")),
      };
      const err = await a.runWith({ nodes: broken }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OscCheckerError);
      expect((err as Error).message).toBe("failed getting node: etcd down");
    });
  });
});
