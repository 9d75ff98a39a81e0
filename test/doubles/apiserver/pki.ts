/** The simulator's CA, serving certificate and client certificate issuing, all done by the openssl CLI. */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { isIP } from "node:net";
import { join } from "node:path";
import { X509Certificate } from "node:crypto";

class OpensslError extends Error {
  override readonly name = "OpensslError";
}

async function openssl(args: string[], cwd: string, stdin?: string): Promise<string> {
  const p = Bun.spawn(["openssl", ...args], { cwd, stdin: stdin === undefined ? "ignore" : "pipe", stdout: "pipe", stderr: "pipe" });
  if (stdin !== undefined && p.stdin !== undefined) {
    p.stdin.write(stdin);
    await p.stdin.end();
  }
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new OpensslError(`openssl ${args[0]} failed (${code}): ${err.trim()}`);
  return out;
}

/** openssl -subj syntax with the separators inside values escaped. */
function subject(cn: string, orgs: readonly string[]): string {
  const esc = (s: string) => s.replace(/([\\/+=,])/g, "\\$1");
  return `${orgs.map((o) => `/O=${esc(o)}`).join("")}/CN=${esc(cn)}`;
}

const genTime = (ms: number): string => `${new Date(ms).toISOString().replace(/[-:T]/g, "").slice(0, 14)}Z`;

const USAGE_KU: Record<string, string> = {
  "digital signature": "digitalSignature",
  "key encipherment": "keyEncipherment",
  "content commitment": "nonRepudiation",
  "key agreement": "keyAgreement",
  "cert sign": "keyCertSign",
  "crl sign": "cRLSign",
};
const USAGE_EKU: Record<string, string> = {
  "client auth": "clientAuth",
  "server auth": "serverAuth",
  "code signing": "codeSigning",
  "email protection": "emailProtection",
};

export class Pki {
  private chain: Promise<unknown> = Promise.resolve();
  private caNotAfterMs = 0;

  private constructor(
    readonly dir: string,
    readonly caFile: string,
    readonly caPem: string,
    readonly servingCertPem: string,
    readonly servingKeyPem: string,
  ) {}

  /** Creates CA and serving certificate (SANs 127.0.0.1, localhost, ::1 plus `extraSans`) in `dir`. */
  static async create(dir: string, extraSans: readonly string[]): Promise<Pki> {
    await mkdir(join(dir, "issued"), { recursive: true });
    await writeFile(join(dir, "index.txt"), "");
    await writeFile(join(dir, "serial"), "1000\n");
    await openssl(
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "3650",
        "-subj",
        "/CN=apiserver-sim-ca",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
      ],
      dir,
    );
    const sans = ["127.0.0.1", "localhost", "::1", ...extraSans].map((s) => (isIP(s) ? `IP:${s}` : `DNS:${s}`));
    await writeFile(
      join(dir, "serving.ext"),
      `subjectAltName=${sans.join(",")}\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\nbasicConstraints=critical,CA:FALSE\n`,
    );
    await openssl(
      [
        "req",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        "serving.key",
        "-out",
        "serving.csr",
        "-subj",
        "/CN=kube-apiserver",
      ],
      dir,
    );
    await openssl(
      [
        "x509",
        "-req",
        "-in",
        "serving.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-set_serial",
        `0x${Bun.randomUUIDv7().replace(/-/g, "").slice(0, 30)}`,
        "-days",
        "3650",
        "-extfile",
        "serving.ext",
        "-out",
        "serving.crt",
      ],
      dir,
    );
    const caFile = join(dir, "ca.crt");
    const pki = new Pki(
      dir,
      caFile,
      await readFile(caFile, "utf8"),
      await readFile(join(dir, "serving.crt"), "utf8"),
      await readFile(join(dir, "serving.key"), "utf8"),
    );
    pki.caNotAfterMs = new X509Cert(pki.caPem).notAfterMs;
    return pki;
  }

  /**
   * Issues a certificate for a PKCS#10 request like kube-controller-manager's signer: subject from the request,
   * notBefore backdated 5 minutes, notAfter = now + expirationSeconds capped at the CA's expiry.
   */
  signRequest(csrPem: string, expirationSeconds: number, usages: readonly string[]): Promise<string> {
    const run = async () => {
      const id = crypto.randomUUID();
      const csrFile = join(this.dir, "issued", `${id}.csr`);
      const crtFile = join(this.dir, "issued", `${id}.crt`);
      await writeFile(csrFile, csrPem);
      await openssl(["req", "-in", csrFile, "-noout", "-verify"], this.dir);
      const ku = usages.map((u) => USAGE_KU[u]).filter((x) => x !== undefined);
      const eku = usages.map((u) => USAGE_EKU[u]).filter((x) => x !== undefined);
      const ext = ["basicConstraints=critical,CA:FALSE", "authorityKeyIdentifier=keyid"];
      if (ku.length > 0) ext.push(`keyUsage=critical,${ku.join(",")}`);
      if (eku.length > 0) ext.push(`extendedKeyUsage=${eku.join(",")}`);
      const conf = [
        "[ca]",
        "default_ca=sim",
        "[sim]",
        `database=${join(this.dir, "index.txt")}`,
        `new_certs_dir=${join(this.dir, "issued")}`,
        `serial=${join(this.dir, "serial")}`,
        "default_md=sha256",
        "policy=pol",
        "unique_subject=no",
        "copy_extensions=none",
        "[pol]",
        "commonName=supplied",
        "organizationName=optional",
        "[ext]",
        ...ext,
        "",
      ].join("\n");
      const confFile = join(this.dir, "issued", `${id}.cnf`);
      await writeFile(confFile, conf);
      const now = Date.now();
      const notAfter = Math.min(now + expirationSeconds * 1000, this.caNotAfterMs);
      await openssl(
        [
          "ca",
          "-batch",
          "-config",
          confFile,
          "-extensions",
          "ext",
          "-preserveDN",
          "-notext",
          "-cert",
          "ca.crt",
          "-keyfile",
          "ca.key",
          "-startdate",
          genTime(now - 5 * 60_000),
          "-enddate",
          genTime(notAfter),
          "-in",
          csrFile,
          "-out",
          crtFile,
        ],
        this.dir,
      );
      return readFile(crtFile, "utf8");
    };
    const p = this.chain.then(run, run);
    this.chain = p.catch(() => undefined);
    return p;
  }

  /** A fresh EC key and a client certificate with CN=`cn` and one O per entry of `orgs`. */
  async issueClientCert(
    cn: string,
    orgs: readonly string[],
    expirationSeconds = 365 * 86400,
  ): Promise<{ certPem: string; keyPem: string }> {
    const id = crypto.randomUUID();
    const keyFile = join(this.dir, "issued", `${id}.key`);
    const csrOut = await openssl(
      ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", keyFile, "-subj", subject(cn, orgs)],
      this.dir,
    );
    const certPem = await this.signRequest(csrOut, expirationSeconds, ["digital signature", "key encipherment", "client auth"]);
    return { certPem, keyPem: await readFile(keyFile, "utf8") };
  }
}

/** The few certificate facts tests look at, read with node:crypto. */
export class X509Cert {
  readonly subject: string;
  readonly notAfterMs: number;
  readonly notBeforeMs: number;
  constructor(pem: string) {
    const c = new X509Certificate(pem);
    this.subject = c.subject;
    this.notAfterMs = Date.parse(c.validTo);
    this.notBeforeMs = Date.parse(c.validFrom);
  }
}
