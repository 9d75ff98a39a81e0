// Minimal HTTPS stand-in for the API server simulator, used only while test/doubles/apiserver is missing: it
// answers GET /version so the guest's connectivity can be proven. Prints the same first JSON line as the simulator.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

function openssl(args: string[]): void {
  const res = Bun.spawnSync(['openssl', ...args], { stderr: 'pipe' });
  if (res.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${res.stderr.toString()}`);
}

function makeCerts(dir: string, san: string): { caFile: string; certFile: string; keyFile: string } {
  const ca = join(dir, 'ca.crt');
  const caKey = join(dir, 'ca.key');
  const key = join(dir, 'server.key');
  const csr = join(dir, 'server.csr');
  const crt = join(dir, 'server.crt');
  const ext = join(dir, 'server.ext');
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', caKey, '-out', ca, '-days', '2', '-subj', '/CN=gna-e2e-ca']);
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', csr, '-subj', '/CN=gna-e2e-apiserver']);
  writeFileSync(ext, `subjectAltName=IP:${san},IP:127.0.0.1\n`);
  openssl(['x509', '-req', '-in', csr, '-CA', ca, '-CAkey', caKey, '-CAcreateserial', '-out', crt, '-days', '2', '-extfile', ext]);
  return { caFile: ca, certFile: crt, keyFile: key };
}

function main(): void {
  const { values } = parseArgs({
    options: { port: { type: 'string' }, bind: { type: 'string' }, san: { type: 'string' }, 'state-dir': { type: 'string' } },
  });
  const dir = values['state-dir'] ?? '/tmp/gna-e2e-standin';
  mkdirSync(dir, { recursive: true });
  const certs = makeCerts(dir, values.san ?? '10.0.2.100');
  const server = Bun.serve({
    port: Number(values.port ?? 0),
    hostname: values.bind ?? '127.0.0.1',
    tls: { cert: Bun.file(certs.certFile), key: Bun.file(certs.keyFile) },
    fetch(req) {
      const url = new URL(req.url);
      console.error(`${new Date().toISOString()} ${req.method} ${url.pathname}`);
      if (url.pathname === '/version') return Response.json({ major: '1', minor: '33', gitVersion: 'v1.33.0-gna-e2e-standin' });
      return Response.json({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 }, { status: 404 });
    },
  });
  console.log(JSON.stringify({ url: `https://127.0.0.1:${server.port}`, caFile: certs.caFile, adminToken: 'standin', standin: true }));
}

main();
