import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { TerminalError } from "../../src/kube/reconcile.ts";
import { acceptanceOsc, type Plain } from "../fixtures/osc/acceptance-osc.ts";
import type { OscWorld } from "../fixtures/osc/harness.ts";
import { eventually } from "../harness/eventually.ts";
import { useOscWorlds } from "../harness/osc-worlds.ts";

const env = useOscWorlds();
const world = env.world;

/** Looks like a credential; must never reach an event, a log line or an error message. */
const secret = "c2VjcmV0LXRva2VuLTk4NzY1NDMyMTA=";
const warnings = (w: OscWorld, reason = "OSCApplyFailed") => w.events().filter((e) => e["type"] === "Warning" && e["reason"] === reason);
const oscCondition = (w: OscWorld) =>
  ((w.node()["status"] as { conditions?: Record<string, string>[] } | undefined)?.conditions ?? []).find(
    (c) => c["type"] === "OperatingSystemConfigApplied",
  );
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as Error,
  );

/** Nothing of the OSC reached the host: no file, no state, no systemd call. */
async function expectUntouched(w: OscWorld): Promise<void> {
  expect(await w.exists("/example/file")).toBe(false);
  expect(await w.exists("/etc/systemd/system/unit1.service")).toBe(false);
  expect(await w.exists("/var/lib/gardener-node-agent/last-computed-osc-changes.yaml")).toBe(false);
  expect(w.actions()).toEqual([]);
}

describe("OSC controller with bad input", () => {
  describe("errors that would echo the input", () => {
    test("should name the line of a YAML syntax error, never its text, in the error and the event", async () => {
      const w = await world();
      w.setOsc(`spec:\n  files:\n  - path: /etc/token\n    content:\n      inline:\n        data: "${secret}\n  units: [\n`);
      const err = await failure(w.reconcile());
      expect(err).toBeInstanceOf(TerminalError);
      expect(err?.message).toMatch(/^failed decoding osc\.yaml of secret kube-system\/\S+: invalid YAML: .* at line \d+, column \d+$/);
      expect(JSON.stringify(err, Object.getOwnPropertyNames(err))).not.toContain(secret);
      const events = warnings(w);
      expect(events).toHaveLength(1);
      expect(String(events[0]?.["message"])).toContain("at line");
      expect(String(events[0]?.["message"])).not.toContain(secret);
    });

    test("should name the field of a type error and the kind of value, not the value", async () => {
      const w = await world();
      w.setOsc(`spec:\n  files:\n  - path: /etc/token\n    permissions: ${secret}\n`);
      const err = await failure(w.reconcile());
      expect(err?.message).toEndWith("spec.files.0.permissions: invalid type: expected number, got string");
      expect(String(warnings(w)[0]?.["message"])).not.toContain(secret);
    });
  });

  describe("paths and names checked before the first write", () => {
    test("should refuse a drop-in directory behind a symlink that leaves the root, and retry (the host may be repaired)", async () => {
      const w = await world();
      await symlink("../../../../../../../../outside", join(w.root, "etc/systemd/system/unit5.service.d"));
      w.setOsc(acceptanceOsc());
      const err = await failure(w.reconcile());
      expect(err).not.toBeInstanceOf(TerminalError);
      expect(err?.message).toContain('unit "unit5.service": cannot write "/etc/systemd/system/unit5.service.d"');
      expect(err?.message).toContain("a symlink points outside the root");
      await expectUntouched(w);
    });

    test("should refuse a unit file that is itself a symlink leaving the root before writing any file", async () => {
      const w = await world();
      await symlink("../../../../../../../../outside", join(w.root, "etc/systemd/system/unit1.service"));
      w.setOsc(acceptanceOsc());
      const err = await failure(w.reconcile());
      expect(err).not.toBeInstanceOf(TerminalError);
      expect(err?.message).toContain('unit "unit1.service": cannot write "/etc/systemd/system/unit1.service"');
      expect(err?.message).toContain("a symlink points outside the root");
      expect(await w.exists("/example/file")).toBe(false);
      expect(await w.exists("/var/lib/gardener-node-agent/last-computed-osc-changes.yaml")).toBe(false);
      expect(w.actions()).toEqual([]);
    });

    // The worlds live in the temp dir (tmpfs under `make test`, /tmp's ext4 otherwise; tmpfs takes chattr
    // flags since Linux 6.0), and the tests run as root, so chattr works.
    test("should refuse a file in an append-only directory (chattr +a) before writing any file, and retry", async () => {
      const w = await world();
      const dir = join(w.root, "example");
      await mkdir(dir, { recursive: true });
      execFileSync("chattr", ["+a", dir]);
      try {
        w.setOsc(acceptanceOsc());
        const err = await failure(w.reconcile());
        expect(err).not.toBeInstanceOf(TerminalError);
        expect(err?.message).toEndWith(
          'file "/example/file": cannot write "/example/file": directory "/example" is append-only (chattr +a)',
        );
        await expectUntouched(w);
      } finally {
        execFileSync("chattr", ["-a", dir]);
      }
      await w.reconcile();
      expect(await w.exists("/example/file")).toBe(true);
    });

    test("should refuse a file that is a symlink loop before writing any file", async () => {
      const w = await world();
      await mkdir(join(w.root, "example"), { recursive: true });
      await symlink("file", join(w.root, "example/file"));
      w.setOsc(acceptanceOsc());
      const err = await failure(w.reconcile());
      expect(err?.message).toContain('file "/example/file": cannot write "/example/file"');
      expect(err?.message).toContain("too many levels of symbolic links");
      expect(await w.exists("/etc/systemd/system/unit1.service")).toBe(false);
      expect(w.actions()).toEqual([]);
    });

    test("should refuse a unit file whose parent is a symlinked directory that leaves the root", async () => {
      const w = await world();
      await mkdir(join(w.root, "etc/systemd/user"), { recursive: true });
      await symlink("../../../../../../../../outside", join(w.root, "etc/systemd/user/escape"));
      const osc = acceptanceOsc();
      osc["spec"]["files"].push({ path: "/etc/systemd/user/escape/x.conf", content: { inline: { data: "x" } } });
      w.setOsc(osc);
      const err = await failure(w.reconcile());
      expect(err?.message).toContain('file "/etc/systemd/user/escape/x.conf": cannot write');
      await expectUntouched(w);
    });

    test("should refuse a file path whose parent is a regular file", async () => {
      const w = await world();
      const osc = acceptanceOsc();
      osc["spec"]["files"].push({ path: "/etc/systemd/system/existing-unit.service/x", content: { inline: { data: "x" } } });
      w.setOsc(osc);
      const err = await failure(w.reconcile());
      expect(err?.message).toContain('"/etc/systemd/system/existing-unit.service" is not a directory');
      await expectUntouched(w);
    });

    test.each([
      ["a 300-character name", `${"a".repeat(292)}.service`, "is longer than 255 characters"],
      ["a newline", "\n.service", "contains a character other than"],
      ["no suffix", "foo", 'has no unit type suffix (such as ".service")'],
      ["an unknown suffix", "foo.conf", "has an unknown unit type suffix"],
      ["an empty template prefix", "@.service", 'has an empty prefix before "@"'],
    ])("should refuse a unit name with %s before writing anything", async (_what, name, problem) => {
      const w = await world();
      const osc = acceptanceOsc();
      osc["spec"]["units"].push({ name, content: "[Service]\n" });
      w.setOsc(osc);
      const err = await failure(w.reconcile());
      expect(err).toBeInstanceOf(TerminalError);
      expect(err?.message).toContain(
        `invalid unit name ${JSON.stringify(name.length > 80 ? `${name.slice(0, 77)}...` : name)}: ${problem}`,
      );
      await expectUntouched(w);
    });

    test("should accept template and instance unit names", async () => {
      const w = await world();
      const osc = acceptanceOsc();
      osc["spec"]["units"].push(
        { name: "getty@.service", content: "[Service]\n" },
        { name: "getty@tty1.service", enable: false, content: "[Service]\n" },
      );
      w.setOsc(osc);
      await w.reconcile();
      expect(await w.text("/etc/systemd/system/getty@.service")).toBe("[Service]\n");
    });
  });

  describe("permissions", () => {
    test.each([
      ["04755 (setuid)", 0o4755, 0o755],
      ["02750 (setgid)", 0o2750, 0o750],
      ["01777 (sticky)", 0o1777, 0o777],
      ["017644 (above 07777)", 0o17644, 0o644],
      ["0100644 (a file type bit)", 0o100644, 0o644],
    ])("should apply only the 0777 bits of %s and warn naming the file", async (_what, requested, applied) => {
      const w = await world();
      const osc = acceptanceOsc();
      osc["spec"]["files"][0].permissions = requested;
      w.setOsc(osc);
      await w.reconcile();
      expect(await w.mode("/example/file")).toBe(applied);
      const events = warnings(w, "FilePermissionsReduced");
      expect(events).toHaveLength(1);
      expect(String(events[0]?.["message"])).toContain(`"/example/file" (0${requested.toString(8)} → 0${applied.toString(8)})`);
    });

    test("should not warn about ordinary modes", async () => {
      const w = await world();
      w.setOsc(acceptanceOsc());
      await w.reconcile();
      expect(warnings(w, "FilePermissionsReduced")).toEqual([]);
    });
  });

  test("should name the file whose base64 content is invalid, with the offset and without the data", async () => {
    const w = await world();
    const osc = acceptanceOsc();
    osc["spec"]["files"].push({ path: "/etc/bad-b64", content: { inline: { encoding: "b64", data: `${secret}!${secret}` } } });
    w.setOsc(osc);
    const err = await failure(w.reconcile());
    expect(err).toBeInstanceOf(TerminalError);
    expect(err?.message).toContain('file "/etc/bad-b64": illegal base64 data at input byte 31');
    expect(err?.message).not.toContain(secret);
    await expectUntouched(w);
  });

  test("should record a Warning event when the checksum annotation is missing, and keep retrying", async () => {
    const w = await world();
    w.setOsc(acceptanceOsc());
    env.sim.store.patch("secrets", "kube-system", w.secretName, "merge", { metadata: { annotations: { "checksum/data-script": null } } });
    const err = await failure(w.reconcile());
    expect(err?.message).toContain("has no checksum/data-script annotation");
    expect(err).not.toBeInstanceOf(TerminalError);
    expect(String(warnings(w)[0]?.["message"])).toContain("has no checksum/data-script annotation");
  });

  test("should say False/ApplyFailed naming the missing checksum annotation on the Node, and Applied once it is set", async () => {
    const w = await world();
    w.setOsc(acceptanceOsc());
    env.sim.store.patch("secrets", "kube-system", w.secretName, "merge", { metadata: { annotations: { "checksum/data-script": null } } });
    await failure(w.reconcile());
    expect(oscCondition(w)).toMatchObject({
      status: "False",
      reason: "ApplyFailed",
      message: `Applying operating system config failed: secret kube-system/${w.secretName} has no checksum/data-script annotation`,
    });
    await expectUntouched(w);
    env.sim.store.patch("secrets", "kube-system", w.secretName, "merge", { metadata: { annotations: { "checksum/data-script": "f00d" } } });
    await w.reconcile();
    // Sent behind the reconcile (a next version does not wait for it).
    const applied = await eventually("the Applied condition", () => oscCondition(w), { until: (c) => c?.["reason"] === "Applied" });
    expect(applied).toMatchObject({ status: "True", reason: "Applied" });
  });

  test("should stay retryable when a referenced secret is missing (it may be created later)", async () => {
    const w = await world();
    const osc = acceptanceOsc();
    osc["spec"]["files"].push({ path: "/etc/later", content: { secretRef: { name: "not-yet-created", dataKey: "k" } } });
    w.setOsc(osc);
    const err = await failure(w.reconcile());
    expect(err?.message).toContain('secret "not-yet-created" not found');
    expect(err).not.toBeInstanceOf(TerminalError);
  });
});

describe("OSC controller runtime with bad input", () => {
  test("should report an OSC that can never be applied once, not retry it, and apply the next osc.yaml", async () => {
    const w = await world();
    // The test's cue: the first reconcile that ends in a TerminalError (the bad osc.yaml's one attempt).
    const rejected = Promise.withResolvers<void>();
    const controller = w.startController({
      wrapReconcile: (inner) => (key, signal) =>
        inner(key, signal).catch((err: unknown) => {
          if (err instanceof TerminalError) rejected.resolve();
          throw err;
        }),
    });

    const bad: Plain = acceptanceOsc();
    bad["spec"]["units"].push({ name: "no-suffix", content: "x" });
    w.setOsc(bad);
    await rejected.promise;

    const good = w.setOsc(acceptanceOsc());
    await env.sim.waitFor(
      "nodes",
      "",
      w.nodeName,
      (o: Record<string, any> | undefined) => o?.["metadata"]?.["annotations"]?.["checksum/cloud-config-data"] === good,
      20_000,
    );
    expect(await w.text("/example/file")).toBe("file1");
    const stats = controller.stats();
    // Exactly one failed attempt: with backoff it would have been retried every few milliseconds meanwhile.
    expect(stats.terminalErrors).toBe(1);
    expect(stats.reconcileErrors).toBe(1);
    expect(stats.retries).toBe(0);
    expect(warnings(w)).toHaveLength(1);
  });
});
