export { startApiServer, ApiServerSim } from "./server.ts";
export type { Obj } from "./store.ts";
export { X509Cert } from "./pki.ts";
