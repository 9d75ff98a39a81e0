import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { selfSignedCert } from "../self-signed.ts";
import { reservePort } from "../../harness/ports.ts";
import { startTokenServer } from "./token-server.ts";
import type { TokenServer } from "./token-server.ts";

export interface RegistryDouble {
  /** "127.0.0.1:PORT" */
  readonly host: string;
  readonly url: string;
  readonly storageDir: string;
  /** Present in token mode. */
  readonly tokenServer?: TokenServer;
  /** The self-signed serving certificate (PEM) in TLS mode. */
  readonly caPem?: string;
  stop(): Promise<void>;
}

export interface StartRegistryOptions {
  /** htpasswd basic auth with these credentials. */
  readonly basicAuth?: { readonly username: string; readonly password: string };
  /** Bearer token auth through a local token server (anonymous unless `tokenCredentials`). */
  readonly tokenAuth?: boolean;
  readonly tokenCredentials?: { readonly username: string; readonly password: string };
  /** Serve HTTPS with a self-signed certificate for 127.0.0.1 (see `caPem`). */
  readonly tls?: boolean;
}

const DEADLINE_MS = 15_000;

/** Debian's docker-registry on 127.0.0.1 with a free port and a temp storage dir. */
export async function startRegistry(options: StartRegistryOptions = {}): Promise<RegistryDouble> {
  const dir = mkdtempSync(join(tmpdir(), "gna-registry-"));
  const storageDir = join(dir, "storage");
  let tokenServer: TokenServer | undefined;
  let proc: Subprocess | undefined;
  try {
    let auth = "";
    if (options.basicAuth !== undefined) {
      const hash = await Bun.password.hash(options.basicAuth.password, { algorithm: "bcrypt", cost: 4 });
      writeFileSync(join(dir, "htpasswd"), `${options.basicAuth.username}:${hash}\n`);
      auth = `auth:\n  htpasswd:\n    realm: test-realm\n    path: ${join(dir, "htpasswd")}\n`;
    } else if (options.tokenAuth) {
      tokenServer = await startTokenServer({ dir, ...(options.tokenCredentials ? { credentials: options.tokenCredentials } : {}) });
      auth = `auth:\n  token:\n    realm: ${tokenServer.realm}\n    service: ${tokenServer.service}\n    issuer: ${tokenServer.issuer}\n    rootcertbundle: ${tokenServer.certPath}\n`;
    }
    let tls = "";
    let caPem: string | undefined;
    if (options.tls) {
      const [key, cert] = [join(dir, "tls.key"), join(dir, "tls.crt")];
      selfSignedCert({ commonName: "test-registry", altNames: ["IP:127.0.0.1"], keyPath: key, certPath: cert, days: 2 });
      tls = `  tls:\n    certificate: ${cert}\n    key: ${key}\n`;
      caPem = await Bun.file(cert).text();
    }
    const scheme = options.tls ? "https" : "http";
    for (let attempt = 0; ; attempt++) {
      const port = reservePort();
      const config = join(dir, "config.yml");
      writeFileSync(
        config,
        `version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${storageDir}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:${port}\n${tls}${auth}`,
      );
      // Logs go to a file: an unread pipe would fill up and stall the registry.
      const logPath = join(dir, `registry-${attempt}.log`);
      proc = Bun.spawn(["/usr/bin/docker-registry", "serve", config], { stdout: "ignore", stderr: Bun.file(logPath) });
      if (await waitReady(`${scheme}://127.0.0.1:${port}/v2/`, proc, caPem)) {
        const running = proc;
        const tokens = tokenServer;
        return {
          host: `127.0.0.1:${port}`,
          url: `${scheme}://127.0.0.1:${port}`,
          storageDir,
          ...(tokens ? { tokenServer: tokens } : {}),
          ...(caPem !== undefined ? { caPem } : {}),
          async stop() {
            running.kill("SIGTERM");
            await running.exited;
            await tokens?.stop();
            rmSync(dir, { recursive: true, force: true });
          },
        };
      }
      proc.kill("SIGKILL");
      await proc.exited;
      if (attempt >= 2) throw new Error(`docker-registry did not start: ${await Bun.file(logPath).text()}`);
    }
  } catch (err) {
    await tokenServer?.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Polls until the registry answers /v2/ (200 or 401), the process dies, or the deadline passes. */
async function waitReady(url: string, proc: Subprocess, caPem: string | undefined): Promise<boolean> {
  const deadline = Date.now() + DEADLINE_MS;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null || proc.signalCode !== null) return false;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000), ...(caPem !== undefined ? { tls: { ca: caPem } } : {}) });
      await res.body?.cancel();
      if (res.status === 200 || res.status === 401) return true;
    } catch {
      // not listening yet: poll again
    }
    await Bun.sleep(25);
  }
  return false;
}
