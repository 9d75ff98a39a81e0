/** osc.yaml (or a state file) could not be decoded into an OperatingSystemConfig. */
export class OscDecodeError extends Error {
  override readonly name = "OscDecodeError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * A file's inline content names an encoding other than "" or "b64". The message says what is
 * accepted, not what was found: the field is free text and may hold anything.
 */
export class InvalidCodecError extends Error {
  override readonly name = "InvalidCodecError";
  constructor() {
    super('invalid file codec id: expected "" or "b64"');
  }
}

/** `b64` data that is not strict standard base64. */
export class Base64Error extends Error {
  override readonly name = "Base64Error";
  constructor(message: string) {
    super(message);
  }
}
