/** One drift the checker reports as a Warning event on the Node (spec §7.6 table, exact texts). */
export interface Finding {
  readonly reason: FindingReason;
  readonly message: string;
}

export type FindingReason =
  | "FileMissing"
  | "FileReadError"
  | "FileMismatch"
  | "FileDecodeError"
  | "FileUnsupportedEncoding"
  | "UnitFileMissing"
  | "UnitMismatch"
  | "DropInMissing"
  | "DropInMismatch"
  | "UnitEnableMismatch"
  | "DependencyMissing"
  /** Several findings with different reasons, reported as one event (drift.ts). */
  | "OSCDrift";

export const fileMissing = (path: string): Finding => ({ reason: "FileMissing", message: `File ${path} is missing` });
export const fileReadError = (path: string): Finding => ({ reason: "FileReadError", message: `Failed to read file ${path}` });
export const fileMismatch = (path: string, expected: string, actual: string): Finding => ({
  reason: "FileMismatch",
  message: `File ${path} mismatch: expected ${expected}, actual ${actual}`,
});
export const fileDecodeError = (path: string): Finding => ({
  reason: "FileDecodeError",
  message: `Failed to decode base64 content for file ${path}`,
});
export const fileUnsupportedEncoding = (encoding: string, path: string): Finding => ({
  reason: "FileUnsupportedEncoding",
  message: `Unsupported encoding ${encoding} for file ${path}`,
});
export const unitFileMissing = (unit: string): Finding => ({ reason: "UnitFileMissing", message: `Unit file ${unit} is missing` });
export const unitMismatch = (unit: string): Finding => ({ reason: "UnitMismatch", message: `Unit ${unit} content mismatch` });
export const dropInMissing = (dropIn: string, unit: string): Finding => ({
  reason: "DropInMissing",
  message: `Drop-in ${dropIn} for unit ${unit} is missing`,
});
export const dropInMismatch = (dropIn: string, unit: string): Finding => ({
  reason: "DropInMismatch",
  message: `Drop-in ${dropIn} for unit ${unit} mismatch`,
});
export const unitEnableMismatch = (unit: string, expected: boolean, actual: boolean): Finding => ({
  reason: "UnitEnableMismatch",
  message: `Unit ${unit} enable state mismatch: expected ${expected}, actual ${actual}`,
});
export const dependencyMissing = (path: string, unit: string): Finding => ({
  reason: "DependencyMissing",
  message: `Dependency file ${path} for unit ${unit} is missing`,
});
