export { maintenanceWindowAnnotation, maintenanceWindowGate, maintenanceWindowPredicate } from "./gate.ts";
