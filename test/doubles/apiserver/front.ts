/**
 * The TLS front door. Bun.serve cannot tell us a peer certificate's subject, node:tls can: each verified TLS
 * connection is piped to the inner plain HTTP server over its own loopback connection, and the inner server
 * recognises the caller by that connection's source port.
 */
import tls from "node:tls";
import net from "node:net";
import { createHash } from "node:crypto";
import type { CertIdentity } from "./authn.ts";

export interface FrontOptions {
  readonly hostname: string;
  readonly port: number;
  readonly certPem: string;
  readonly keyPem: string;
  readonly caPem: string;
  /** Port of the inner plain HTTP server (known only once it listens). */
  readonly innerPort: () => number;
}

const asList = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

export class TlsFront {
  /** source port of the loopback connection → verified client certificate. */
  private readonly identities = new Map<number, CertIdentity>();
  private readonly sockets = new Set<net.Socket>();
  private server: tls.Server | undefined;
  port: number;

  constructor(private readonly opts: FrontOptions) {
    this.port = opts.port;
  }

  identityOf(sourcePort: number): CertIdentity | undefined {
    return this.identities.get(sourcePort);
  }

  get listening(): boolean {
    return this.server !== undefined;
  }

  private onConnection(s: tls.TLSSocket): void {
    let identity: CertIdentity | undefined;
    if (s.authorized) {
      const peer = s.getPeerCertificate();
      const cn = asList(peer?.subject?.CN)[0];
      if (cn !== undefined) {
        const raw: Buffer | undefined = peer.raw;
        identity =
          raw === undefined
            ? { cn, orgs: asList(peer.subject.O) }
            : { cn, orgs: asList(peer.subject.O), sha256: createHash("sha256").update(raw).digest("hex") };
      }
    }
    s.pause();
    const up = net.connect(this.opts.innerPort(), "127.0.0.1", () => {
      const port = up.localPort;
      // a source port can be reused before the old connection's close event ran: always overwrite, and only
      // remove the entry this connection wrote
      const entry = identity === undefined ? undefined : { ...identity };
      if (port !== undefined) {
        if (entry === undefined) this.identities.delete(port);
        else this.identities.set(port, entry);
      }
      up.on("close", () => {
        if (port !== undefined && entry !== undefined && this.identities.get(port) === entry) this.identities.delete(port);
      });
      s.pipe(up);
      up.pipe(s);
      s.resume();
    });
    this.sockets.add(s);
    this.sockets.add(up);
    const end = () => {
      s.destroy();
      up.destroy();
      this.sockets.delete(s);
      this.sockets.delete(up);
    };
    s.on("error", end);
    up.on("error", end);
    s.on("close", end);
    up.on("close", end);
  }

  /** Starts accepting on the configured port (the same port again after `close`). */
  listen(): Promise<void> {
    const srv = tls.createServer(
      { key: this.opts.keyPem, cert: this.opts.certPem, ca: this.opts.caPem, requestCert: true, rejectUnauthorized: false },
      (s) => this.onConnection(s),
    );
    // A connection still in its TLS handshake has no TLSSocket yet; `close` must cut it too, or the
    // server's close waits for it (a test file's teardown hung on one, 2 runs in 12 under load).
    srv.on("connection", (raw: net.Socket) => {
      this.sockets.add(raw);
      raw.on("close", () => this.sockets.delete(raw));
    });
    return new Promise((resolve, reject) => {
      srv.once("error", reject);
      srv.listen(this.port, this.opts.hostname, () => {
        srv.off("error", reject);
        const addr = srv.address();
        if (addr !== null && typeof addr === "object") this.port = addr.port;
        this.server = srv;
        resolve();
      });
    });
  }

  /** Stops listening and cuts every open connection, so clients see resets and then ECONNREFUSED. */
  async close(): Promise<void> {
    const srv = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (srv !== undefined) await new Promise<void>((resolve) => srv.close(() => resolve()));
  }
}
