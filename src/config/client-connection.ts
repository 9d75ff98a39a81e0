import * as v from "valibot";
import { int32Or, numberOr, stringOr } from "./fields.ts";

/** `clientConnection` (component-base ClientConnectionConfiguration). */
export const clientConnectionSchema = v.object({
  /** Non-empty → legacy/dev auth path. */
  kubeconfig: stringOr(""),
  acceptContentTypes: stringOr(""),
  contentType: stringOr("application/vnd.kubernetes.protobuf"),
  qps: numberOr(50),
  burst: int32Or(100),
});
