import { TerminalError } from "../../../kube/index.ts";
import type { Osc, OscFile, Unit } from "../../../osc/index.ts";
import { checkInPlaceFields, UnsupportedOscFieldError } from "./inplace-spec.ts";

const unitCommands = new Set(["", "start", "restart", "stop"]);
const cgroupDrivers = new Set(["", "systemd", "cgroupfs"]);

function checkUnits(units: readonly Unit[] | undefined, path: string): void {
  (units ?? []).forEach((u, i) => {
    if (!unitCommands.has(u.command ?? ""))
      throw new UnsupportedOscFieldError(`${path}[${i}].command`, `unit ${u.name}: unknown command ${JSON.stringify(u.command)}`);
  });
}

function checkFiles(files: readonly OscFile[] | undefined, path: string): void {
  (files ?? []).forEach((f, i) => {
    const c = f.content;
    if (c.inline === undefined && c.secretRef === undefined && c.imageRef === undefined) {
      throw new UnsupportedOscFieldError(`${path}[${i}].content`, `file ${f.path}: none of inline, secretRef or imageRef`);
    }
  });
}

function findUnsupported(osc: Osc): void {
  const cri = osc.spec.criConfig;
  if (cri !== undefined) {
    if (cri.name !== "" && cri.name !== "containerd")
      throw new UnsupportedOscFieldError("spec.criConfig.name", `container runtime ${JSON.stringify(cri.name)}`);
    if (!cgroupDrivers.has(cri.cgroupDriver ?? ""))
      throw new UnsupportedOscFieldError("spec.criConfig.cgroupDriver", `cgroup driver ${JSON.stringify(cri.cgroupDriver)}`);
  }
  checkUnits(osc.spec.units, "spec.units");
  checkUnits(osc.status.extensionUnits, "status.extensionUnits");
  checkFiles(osc.spec.files, "spec.files");
  checkFiles(osc.status.extensionFiles, "status.extensionFiles");
}

/** "Never silently ignore": an unimplemented field that matters stops the apply before any write (terminal: only a new OSC helps). */
export function checkSupportedFields(osc: Osc): void {
  try {
    findUnsupported(osc);
  } catch (err) {
    if (err instanceof UnsupportedOscFieldError) throw new TerminalError(err.message, { cause: err });
    throw err;
  }
  checkInPlaceFields(osc);
}
