import { describe, expect, test } from "bun:test";
import { prepareForUpdate } from "./strategy.ts";
import { resolveDef } from "./resources.ts";

const CSR = resolveDef("certificatesigningrequests");
const NOW = Date.parse("2026-03-04T05:06:07.890Z");
const EARLIER = "2026-01-01T00:00:00Z";
const csr = (conditions: Record<string, unknown>[], certificate?: string) => ({
  metadata: { name: "c" },
  spec: { request: "cmVx", signerName: "s" },
  status: certificate === undefined ? { conditions } : { conditions, certificate },
});

describe("prepareForUpdate of a CertificateSigningRequest", () => {
  test("should stamp an approval condition without times with now", () => {
    const o = csr([{ type: "Approved", status: "True", reason: "R", message: "m" }]);
    prepareForUpdate(CSR, o, csr([]), "approval", NOW);
    expect(o.status.conditions).toEqual([
      {
        type: "Approved",
        status: "True",
        reason: "R",
        message: "m",
        lastUpdateTime: "2026-03-04T05:06:07Z",
        lastTransitionTime: "2026-03-04T05:06:07Z",
      },
    ]);
  });

  test("should keep the stored lastTransitionTime of a condition with the same type and status, and given times", () => {
    const old = csr([{ type: "Approved", status: "True", lastUpdateTime: EARLIER, lastTransitionTime: EARLIER }]);
    const o = csr([
      { type: "Approved", status: "True" },
      { type: "Failed", status: "True", lastUpdateTime: EARLIER },
    ]);
    prepareForUpdate(CSR, o, old, "approval", NOW);
    expect(o.status.conditions).toEqual([
      { type: "Approved", status: "True", lastUpdateTime: "2026-03-04T05:06:07Z", lastTransitionTime: EARLIER },
      { type: "Failed", status: "True", lastUpdateTime: EARLIER, lastTransitionTime: "2026-03-04T05:06:07Z" },
    ]);
  });

  test("should stamp conditions written through status, keeping the stored approval", () => {
    const old = csr([{ type: "Approved", status: "True", lastUpdateTime: EARLIER, lastTransitionTime: EARLIER }]);
    const o = csr([{ type: "Failed", status: "True", reason: "SignerValidationFailure" }], "Y2VydA==");
    prepareForUpdate(CSR, o, old, "status", NOW);
    expect(o.status).toEqual({
      conditions: [
        { type: "Approved", status: "True", lastUpdateTime: EARLIER, lastTransitionTime: EARLIER },
        {
          type: "Failed",
          status: "True",
          reason: "SignerValidationFailure",
          lastUpdateTime: "2026-03-04T05:06:07Z",
          lastTransitionTime: "2026-03-04T05:06:07Z",
        },
      ],
      certificate: "Y2VydA==",
    });
  });
});
