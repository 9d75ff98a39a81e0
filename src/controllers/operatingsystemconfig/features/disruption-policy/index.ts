export { disruptionPolicyExtension } from "./extension.ts";
