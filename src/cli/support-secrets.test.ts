import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createHostFs } from "../host/index.ts";
import { decodeOsc } from "../osc/index.ts";
import { collectNodeSecrets } from "./support-secrets.ts";

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function rootWith(files: Record<string, [string, number]>): string {
  const root = mkdtempSync(join(tmpdir(), "gna-support-"));
  roots.push(root);
  for (const [path, [text, mode]] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text, { mode });
  }
  return root;
}

const osc = decodeOsc(`apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  files:
  - path: /etc/app/kubeconfig
    permissions: 0644
    content: {secretRef: {name: app, dataKey: kubeconfig}}
  - path: /var/lib/kubelet/config/kubelet
    permissions: 0600
    content: {inline: {data: "x"}}
  - path: /etc/motd
    permissions: 0644
    content: {inline: {data: "hi"}}
`);

describe("collectNodeSecrets", () => {
  test("takes every value of a structured secretRef file but not its keys, only secret keys of a structured 0600 file", async () => {
    const root = rootWith({
      "/etc/app/kubeconfig": ["apiVersion: v1\nclusters:\n- name: shoot-ab12\n  cluster: {server: 'https://api.internal'}\n", 0o644],
      "/var/lib/kubelet/config/kubelet": [
        "kind: KubeletConfiguration\ncgroupDriver: systemd\nstaticPodURLHeader: {Authorization: [x]}\npassword: kub3let-pass\n",
        0o600,
      ],
      "/etc/motd": ["hi\n", 0o644],
    });
    const s = await collectNodeSecrets(createHostFs(root), osc, "node", undefined, []);
    expect(s.values.has("shoot-ab12")).toBe(true);
    expect(s.values.has("https://api.internal")).toBe(true);
    expect(s.values.has("apiVersion")).toBe(false);
    expect(s.values.has("clusters")).toBe(false);
    expect(s.values.has("kub3let-pass")).toBe(true);
    expect(s.values.has("KubeletConfiguration")).toBe(false);
    expect(s.files.map((f) => [f.path, f.secret, f.sha256 !== undefined])).toEqual([
      ["/etc/app/kubeconfig", "from Secret app", false],
      ["/etc/motd", undefined, true],
      ["/var/lib/kubelet/config/kubelet", "mode 0600", false],
    ]);
  });

  test("takes the text, lines and words of token files and the registry password inside docker's auth", async () => {
    const auth = Buffer.from("robot:r0bot-pass").toString("base64");
    const root = rootWith({
      "/var/lib/gardener-node-agent/credentials/token": ["tok3n-value-abc\n", 0o600],
      "/var/lib/gardener-node-agent/registry-auth.json": [JSON.stringify({ auths: { r: { auth } } }), 0o600],
      "/etc/motd": ["hello there\n", 0o600],
    });
    const s = await collectNodeSecrets(createHostFs(root), undefined, "node", undefined, []);
    expect([...s.values]).toEqual(expect.arrayContaining(["tok3n-value-abc", auth, "r0bot-pass"]));
    // Not managed (no OSC) and not a credential: not listed, not read.
    expect(s.files.map((f) => f.path)).toEqual([
      "/var/lib/gardener-node-agent/credentials/token",
      "/var/lib/gardener-node-agent/registry-auth.json",
    ]);
    expect(s.values.has("hello")).toBe(false);
  });
});
