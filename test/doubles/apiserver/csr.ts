/** The test's stand-ins for the CSR approver and kube-controller-manager's signer. */
import type { Obj, SimStore } from "./store.ts";
import type { Pki } from "./pki.ts";
import { isObj } from "./merge-patch.ts";

export class CsrNotReadyError extends Error {
  override readonly name = "CsrNotReadyError";
}

function mustGet(store: SimStore, name: string): Obj {
  const csr = store.get("certificatesigningrequests", "", name);
  if (csr === undefined) throw new CsrNotReadyError(`certificatesigningrequest ${name} does not exist`);
  return csr;
}

function conditions(csr: Obj): Obj[] {
  const status = isObj(csr["status"]) ? csr["status"] : {};
  return Array.isArray(status["conditions"]) ? (status["conditions"] as unknown[]).filter(isObj) : [];
}

function addCondition(store: SimStore, name: string, type: string, reason: string, message: string): Obj {
  const csr = mustGet(store, name);
  // the approval subresource sets lastUpdateTime/lastTransitionTime, as kube-apiserver does
  const conds = conditions(csr).filter((c) => c["type"] !== type);
  conds.push({ type, status: "True", reason, message });
  csr["status"] = { ...(isObj(csr["status"]) ? csr["status"] : {}), conditions: conds };
  return store.update("certificatesigningrequests", csr, { subresource: "approval" });
}

export function approveCsr(store: SimStore, name: string, reason: string, message: string): Obj {
  return addCondition(store, name, "Approved", reason, message);
}

export function denyCsr(store: SimStore, name: string, reason: string, message: string): Obj {
  return addCondition(store, name, "Denied", reason, message);
}

/** Signs like the kube-apiserver-client signer: only approved CSRs, validity from spec.expirationSeconds. */
export async function signCsr(store: SimStore, pki: Pki, name: string): Promise<string> {
  const csr = mustGet(store, name);
  if (!conditions(csr).some((c) => c["type"] === "Approved" && c["status"] === "True"))
    throw new CsrNotReadyError(`certificatesigningrequest ${name} is not approved`);
  const spec = isObj(csr["spec"]) ? csr["spec"] : {};
  const pem = Buffer.from(String(spec["request"] ?? ""), "base64").toString("utf8");
  const exp = typeof spec["expirationSeconds"] === "number" ? spec["expirationSeconds"] : 365 * 86400;
  const usages = Array.isArray(spec["usages"]) ? spec["usages"].map(String) : [];
  const certPem = await pki.signRequest(pem, exp, usages);
  const fresh = mustGet(store, name);
  fresh["status"] = { ...(isObj(fresh["status"]) ? fresh["status"] : {}), certificate: Buffer.from(certPem).toString("base64") };
  store.update("certificatesigningrequests", fresh, { subresource: "status" });
  return certPem;
}
