import * as v from "valibot";
import type { Clock } from "../clock/index.ts";
import type { HostFs } from "../host/index.ts";
import { certificateSigningRequests, isAlreadyExists } from "../kube/index.ts";
import type { Kube, KubeObject } from "../kube/index.ts";
import type { Logger } from "../log/index.ts";
import { createCsrPem, parseCsrPem } from "./csr.ts";
import type { CsrSubject } from "./csr.ts";
import { csrName } from "./csr-name.ts";
import { decodeEcPrivateKeyPem, encodeEcPrivateKeyPem, generateEcKey, publicKeyInfoDer } from "./ec-key.ts";
import type { EcKey } from "./ec-key.ts";
import { pendingKeyPath } from "./paths.ts";

const signerName = "kubernetes.io/kube-apiserver-client";
const csrUsages = ["digital signature", "key encipherment", "client auth"] as const;
const csrExpirationSeconds = 2592000;
const commonNamePrefix = "gardener.cloud:node-agent:machine:";
const organization = "gardener.cloud:node-agents";
const pollIntervalMs = 2_000;
const waitTimeoutMs = 15 * 60_000;

export type CertificateRequestErrorKind = "denied" | "failed" | "incompatible" | "uid-changed" | "timeout";

/** The CSR did not yield a certificate; `kind` says why. */
export class CertificateRequestError extends Error {
  override readonly name = "CertificateRequestError";
  constructor(
    readonly kind: CertificateRequestErrorKind,
    message: string,
  ) {
    super(message);
  }
}

export interface CertificateRequestDeps {
  /** Authenticated as the requester (bootstrap token, or the current client certificate when rotating). */
  readonly kube: Kube;
  readonly host: HostFs;
  readonly clock: Clock;
  readonly log: Logger;
}

export interface IssuedCertificate {
  readonly certificatePem: string;
  readonly keyPem: string;
  readonly csrName: string;
}

const conditionSchema = v.object({ type: v.string(), reason: v.optional(v.string(), ""), message: v.optional(v.string(), "") });
const csrSchema = v.object({
  metadata: v.object({ uid: v.optional(v.string(), "") }),
  spec: v.object({
    request: v.optional(v.string(), ""),
    signerName: v.optional(v.string(), ""),
    usages: v.optional(v.array(v.string()), []),
  }),
  status: v.optional(
    v.object({
      conditions: v.optional(v.array(conditionSchema), []),
      certificate: v.optional(v.string(), ""),
    }),
    {},
  ),
});
type Csr = v.InferOutput<typeof csrSchema>;

function parseCsr(obj: unknown, name: string): Csr {
  const res = v.safeParse(csrSchema, obj);
  if (!res.success) throw new CertificateRequestError("incompatible", `CertificateSigningRequest ${name} has an unexpected shape`);
  return res.output;
}

const equalBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(Buffer.from(b));

/** Reuse rule for an existing CSR of the same name: same signer, same usages, same subject and key. */
function checkCompatible(existing: Csr, name: string, requestPem: string): void {
  const mine = parseCsrPem(requestPem);
  let theirs: ReturnType<typeof parseCsrPem>;
  try {
    theirs = parseCsrPem(Buffer.from(existing.spec.request, "base64").toString("utf8"));
  } catch {
    throw new CertificateRequestError("incompatible", `retrieved csr ${name} is not compatible: unparsable request`);
  }
  const sameUsages = existing.spec.usages.length === csrUsages.length && csrUsages.every((u) => existing.spec.usages.includes(u));
  if (existing.spec.signerName !== signerName || !sameUsages) {
    throw new CertificateRequestError("incompatible", `retrieved csr ${name} is not compatible: signer or usages differ`);
  }
  if (!equalBytes(mine.subjectDer, theirs.subjectDer) || !equalBytes(mine.publicKeyInfoDer, theirs.publicKeyInfoDer)) {
    throw new CertificateRequestError("incompatible", `retrieved csr ${name} is not compatible: subject or public key differ`);
  }
}

/**
 * The key of the request in flight: read back from credentials/ after a restart (so the CSR name and
 * the pending CSR stay the same), else freshly generated and persisted (0600) before the CSR exists.
 */
async function pendingKey(deps: CertificateRequestDeps): Promise<EcKey> {
  const pem = await deps.host.readText(pendingKeyPath);
  if (pem !== undefined) {
    try {
      return await decodeEcPrivateKeyPem(pem);
    } catch (err) {
      deps.log.error("Ignoring unreadable pending CSR key", { path: pendingKeyPath, err });
    }
  }
  const key = await generateEcKey();
  await deps.host.ensureDir(pendingKeyPath.slice(0, pendingKeyPath.lastIndexOf("/")), 0o700);
  await deps.host.writeFileAtomic(pendingKeyPath, encodeEcPrivateKeyPem(key), 0o600);
  return key;
}

/** Forgets the pending key: after success, or when the CSR is final (denied/failed) so a retry starts fresh. */
export async function discardPendingKey(host: HostFs): Promise<void> {
  await host.remove(pendingKeyPath);
}

async function createOrReuse(deps: CertificateRequestDeps, name: string, requestPem: string, signal: AbortSignal): Promise<string> {
  const body: KubeObject = {
    apiVersion: "certificates.k8s.io/v1",
    kind: "CertificateSigningRequest",
    metadata: { name },
    spec: {
      request: Buffer.from(requestPem).toString("base64"),
      signerName,
      usages: [...csrUsages],
      expirationSeconds: csrExpirationSeconds,
    },
  };
  try {
    const created = parseCsr(await deps.kube.create(certificateSigningRequests, "", body, { signal }), name);
    deps.log.info("Created CertificateSigningRequest", { csrName: name });
    return created.metadata.uid;
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  const existing = parseCsr(await deps.kube.get(certificateSigningRequests, "", name, { signal }), name);
  try {
    checkCompatible(existing, name, requestPem);
  } catch (err) {
    // The same key would meet the same CSR again on every retry: start over with a fresh one.
    await discardPendingKey(deps.host);
    throw err;
  }
  deps.log.info("Reusing existing CertificateSigningRequest", { csrName: name });
  return existing.metadata.uid;
}

/** One look at the CSR: the certificate PEM when issued, undefined while pending; throws when final. */
function issuedCertificate(csr: Csr, name: string, uid: string): string | undefined {
  if (uid !== "" && csr.metadata.uid !== uid) {
    throw new CertificateRequestError("uid-changed", `CertificateSigningRequest ${name} was recreated (uid changed)`);
  }
  for (const c of csr.status.conditions) {
    if (c.type === "Denied") {
      throw new CertificateRequestError(
        "denied",
        `CertificateSigningRequest ${name} is denied, reason: ${c.reason}, message: ${c.message}`,
      );
    }
    if (c.type === "Failed") {
      throw new CertificateRequestError("failed", `CertificateSigningRequest ${name} failed, reason: ${c.reason}, message: ${c.message}`);
    }
    if (c.type === "Approved") {
      return csr.status.certificate === "" ? undefined : Buffer.from(csr.status.certificate, "base64").toString("utf8");
    }
  }
  return undefined;
}

/**
 * Requests a client certificate for `machineName` (spec §7.3 / controllers.md §6): create the CSR
 * (or reuse a compatible one of the same name), then GET it every 2 s for up to 15 min. A failed GET
 * ends the wait at once. The caller writes the kubeconfig and then calls discardPendingKey.
 */
export async function requestClientCertificate(
  deps: CertificateRequestDeps,
  machineName: string,
  signal: AbortSignal,
): Promise<IssuedCertificate> {
  const subject: CsrSubject = { commonName: `${commonNamePrefix}${machineName}`, organization };
  const key = await pendingKey(deps);
  const requestPem = await createCsrPem(key, subject);
  const name = csrName(publicKeyInfoDer(key), subject, csrUsages);
  const uid = await createOrReuse(deps, name, requestPem, signal);

  const deadline = deps.clock.now() + waitTimeoutMs;
  deps.log.info("Waiting for CertificateSigningRequest to be approved and signed", { csrName: name });
  for (;;) {
    const csr = parseCsr(await deps.kube.get(certificateSigningRequests, "", name, { signal }), name);
    let pem: string | undefined;
    try {
      pem = issuedCertificate(csr, name, uid);
    } catch (err) {
      // A denied/failed CSR is final: the next attempt must use a fresh key and thus a new CSR name.
      await discardPendingKey(deps.host);
      throw err;
    }
    if (pem !== undefined) {
      deps.log.info("CertificateSigningRequest signed", { csrName: name });
      return { certificatePem: pem, keyPem: encodeEcPrivateKeyPem(key), csrName: name };
    }
    if (deps.clock.now() >= deadline) {
      throw new CertificateRequestError("timeout", `timed out waiting for CertificateSigningRequest ${name} to be signed`);
    }
    await deps.clock.sleep(pollIntervalMs, signal);
  }
}
