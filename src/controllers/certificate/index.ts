export { ClientCertificateError } from "./deadline.ts";
export { CertificateRotationError, endpointOf } from "./reconcile.ts";
export { setupCertificateController } from "./setup.ts";
