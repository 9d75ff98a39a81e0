import { describe, expect, test } from "bun:test";
import { KubeconfigError, loadKubeconfig, parseKubeconfig, restConfigFromValues } from "./kubeconfig.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const files: Record<string, string> = {
  "/root/etc/ca.crt": "CA-PEM",
  "/root/var/lib/gna/credentials/client.crt": "CERT-PEM",
  "/root/var/lib/gna/credentials/client.key": "KEY-PEM",
  "/root/var/lib/gna/credentials/kubeconfig": "",
};
const readFile = async (p: string) => {
  const f = files[p];
  if (f === undefined) throw new Error(`ENOENT ${p}`);
  return f;
};
const resolvePath = (p: string) => `/root${p}`;
const opts = { readFile, resolvePath };

const doc = (cluster: string, user: string, extra = "") => `
apiVersion: v1
kind: Config
current-context: ctx
contexts:
- name: other
  context: {cluster: nope, user: nope}
- name: ctx
  context:
    cluster: c
    user: u
clusters:
- name: c
  cluster:
${cluster}
users:
- name: u
  user:
${user}
${extra}`;

describe("kubeconfig", () => {
  describe("parseKubeconfig", () => {
    test("should take server, CA data, client cert/key data from the current context", async () => {
      const cfg = await parseKubeconfig(
        doc(
          `    server: https://api.example:6443/\n    certificate-authority-data: ${b64("CA")}`,
          `    client-certificate-data: ${b64("CERT")}\n    client-key-data: ${b64("KEY")}`,
        ),
        "/var/lib/gna/credentials/kubeconfig",
        opts,
      );
      expect(cfg).toEqual({
        server: "https://api.example:6443",
        caPem: "CA",
        clientCertPem: "CERT",
        clientKeyPem: "KEY",
        credentials: { kind: "none" },
      });
    });

    test("should read CA and client cert/key files under the root, relative to the kubeconfig", async () => {
      const cfg = await parseKubeconfig(
        doc(
          `    server: api.example\n    certificate-authority: /etc/ca.crt`,
          `    client-certificate: client.crt\n    client-key: ./client.key`,
        ),
        "/var/lib/gna/credentials/kubeconfig",
        opts,
      );
      expect(cfg.server).toBe("https://api.example");
      expect(cfg.caPem).toBe("CA-PEM");
      expect(cfg.caFile).toBe("/etc/ca.crt");
      expect(cfg.clientCertPem).toBe("CERT-PEM");
      expect(cfg.clientKeyPem).toBe("KEY-PEM");
    });

    test.each([
      ["token", "    token: abc", { kind: "token", token: "abc" }],
      ["tokenFile", "    tokenFile: /var/lib/gna/credentials/token", { kind: "tokenFile", path: "/root/var/lib/gna/credentials/token" }],
      ["basic", "    username: admin\n    password: pw", { kind: "basic", username: "admin", password: "pw" }],
    ])("should take %s credentials", async (_name, user, creds) => {
      const cfg = await parseKubeconfig(doc("    server: https://a", user), "/k", opts);
      expect(cfg.credentials).toEqual(creds as never);
    });

    test.each([
      ["users[0].user.exec", "    exec: {command: foo}"],
      ["users[0].user.auth-provider", "    auth-provider: {name: gcp}"],
      ["users[0].user.as", "    as: someone"],
    ])("should reject %s", async (field, user) => {
      const p = parseKubeconfig(doc("    server: https://a", user), "/k", opts);
      await expect(p).rejects.toThrow(`kubeconfig /k: ${field} is not supported`);
    });

    test("should reject client certificate files on the legacy path", async () => {
      const p = parseKubeconfig(doc("    server: https://a", "    client-certificate: /x.crt\n    client-key: /x.key"), "/k", {
        ...opts,
        legacyRestrictions: true,
      });
      await expect(p).rejects.toThrow("users[0].user.client-certificate is not supported");
    });

    test("should refuse to disable TLS verification", async () => {
      const p = parseKubeconfig(doc("    server: https://a\n    insecure-skip-tls-verify: true", "    token: t"), "/k", opts);
      await expect(p).rejects.toThrow("clusters[0].cluster.insecure-skip-tls-verify is not supported");
    });

    test.each([
      [
        "a field of the wrong type",
        doc("    server: 42", "    token: t"),
        "clusters[0].cluster.server: invalid type: expected string, got number",
      ],
      ["a missing server", doc("    certificate-authority: /x", "    token: t"), "clusters[0].cluster.server"],
      ["an unknown current context", "current-context: nope\ncontexts: []", 'context "nope" not found'],
      ["no current context", "clusters: []", "current-context is not set"],
      ["a non-mapping", "- a\n- b", "not a mapping"],
      [
        "bad base64",
        doc("    server: https://a\n    certificate-authority-data: '@@@'", "    token: t"),
        "certificate-authority-data: not valid base64",
      ],
      ["a cert without key", doc("    server: https://a", `    client-certificate-data: ${b64("C")}`), "must be given together"],
      [
        "a missing CA file",
        doc("    server: https://a\n    certificate-authority: /missing", "    token: t"),
        "certificate-authority: cannot read /missing",
      ],
    ])("should name the problem for %s", async (_what, text, msg) => {
      const p = parseKubeconfig(text, "/k", opts);
      await expect(p).rejects.toBeInstanceOf(KubeconfigError);
      await expect(parseKubeconfig(text, "/k", opts)).rejects.toThrow(msg);
    });
  });

  test("should name an unknown context escaped and cut to 80 characters, never the rest of it", async () => {
    const secret = "c2VjcmV0LXRva2VuLTk4NzY1NDMyMTA";
    const err = await parseKubeconfig(`current-context: "${"n".repeat(90)}\\n${secret}"\ncontexts: []`, "/k", opts).catch(
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(KubeconfigError);
    expect((err as Error).message).toBe(`kubeconfig /k: context "${"n".repeat(77)}..." not found`);
  });

  describe("loadKubeconfig", () => {
    test("should read the file through the path resolver", async () => {
      files["/root/var/lib/gna/credentials/kubeconfig"] = doc("    server: https://x", "    token: t");
      const cfg = await loadKubeconfig("/var/lib/gna/credentials/kubeconfig", opts);
      expect(cfg.server).toBe("https://x");
      await expect(loadKubeconfig("/nope", opts)).rejects.toThrow("kubeconfig: cannot read /nope");
    });
  });

  describe("restConfigFromValues", () => {
    test("should build the bootstrap-token config with a CA file path and token file", async () => {
      const cfg = await restConfigFromValues(
        { server: "api.example:443", caFile: "/etc/ca.crt", tokenFile: "/var/lib/gna/credentials/bootstrap-token" },
        opts,
      );
      expect(cfg).toEqual({
        server: "https://api.example:443",
        caPem: "CA-PEM",
        caFile: "/etc/ca.crt",
        credentials: { kind: "tokenFile", path: "/root/var/lib/gna/credentials/bootstrap-token" },
      });
    });
  });
});
