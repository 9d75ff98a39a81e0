export { maintenanceWindowGate, maintenanceWindowPredicate } from "./gate.ts";
