import * as v from "valibot";
import { int32Or, stringOr, section } from "./fields.ts";

const endpointSchema = (defaultPort: number) =>
  section(
    v.object({
      /** "" = all interfaces. */
      bindAddress: stringOr(""),
      port: int32Or(defaultPort),
    }),
  );

/** `server`: health probes on :2751 (/healthz, /readyz), metrics on :2752 (/metrics). */
export const serverSchema = v.object({
  healthProbes: endpointSchema(2751),
  metrics: endpointSchema(2752),
});
