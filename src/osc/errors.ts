/** osc.yaml (or a state file) could not be decoded into an OperatingSystemConfig. */
export class OscDecodeError extends Error {
  override readonly name = "OscDecodeError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** A file's inline content names an encoding other than "" or "b64". */
export class InvalidCodecError extends Error {
  override readonly name = "InvalidCodecError";
  constructor(readonly encoding: string) {
    super(`invalid file codec id "${encoding}"`);
  }
}

/** `b64` data that is not strict standard base64. */
export class Base64Error extends Error {
  override readonly name = "Base64Error";
  constructor(message: string) {
    super(message);
  }
}
