export { disruptionPolicyExtension, invalidPolicyReason } from "./extension.ts";
