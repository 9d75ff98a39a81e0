export { resetNode, successMessage } from "./reset.ts";
