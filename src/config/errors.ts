/** Kinds of field errors, named like Kubernetes' `field.ErrorType`. */
export type FieldIssueType = "Required" | "Invalid" | "Duplicate" | "NotSupported";

/**
 * One problem with one field; `path` is dotted/indexed: `controllers.token.syncConfigs[1].path`.
 * It carries no value: a field may hold anything (a credential, 10,000 characters), so `detail` says
 * what the field must look like instead.
 */
export interface FieldIssue {
  readonly path: string;
  readonly type: FieldIssueType;
  readonly detail: string;
}

const TYPE_TEXT: Readonly<Record<FieldIssueType, string>> = {
  Required: "Required value",
  Invalid: "Invalid value",
  Duplicate: "Duplicate value",
  NotSupported: "Unsupported value",
};

/** `path: Invalid value: detail`, as Kubernetes' `field.Error.Error()` prints it but without the value. */
export const formatFieldIssue = (issue: FieldIssue): string =>
  [issue.path, TYPE_TEXT[issue.type], ...(issue.detail === "" ? [] : [issue.detail])].join(": ");

/** Where loading failed: the file could not be read or chosen, it did not decode, or it did not validate. */
export type ConfigErrorStage = "read" | "decode" | "validate";

/**
 * A config that cannot be used. The message names the file and every field path; `issues` carries
 * them typed (decode errors of single fields are reported as `Invalid`).
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(
    readonly stage: ConfigErrorStage,
    readonly file: string | undefined,
    readonly issues: readonly FieldIssue[],
    reason: string,
    options?: ErrorOptions,
  ) {
    super(ConfigError.compose(stage, file, reason), options);
  }

  private static compose(stage: ConfigErrorStage, file: string | undefined, reason: string): string {
    const where = file === undefined ? "" : `${file}: `;
    if (stage === "read") return `error reading config file: ${where}${reason}`;
    if (stage === "decode") return `error decoding config: ${where}${reason}`;
    return `invalid config: ${where}${reason}`;
  }

  /** A validation failure listing every issue (Kubernetes aggregate style: `[a, b]` for several). */
  static invalid(file: string | undefined, issues: readonly FieldIssue[]): ConfigError {
    const texts = issues.map(formatFieldIssue);
    const reason = texts.length === 1 ? (texts[0] ?? "") : `[${texts.join(", ")}]`;
    return new ConfigError("validate", file, issues, reason);
  }
}
