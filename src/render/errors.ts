export type RenderErrorKind = "invalid" | "secret-not-found";

/** The OSC cannot be rendered; `field` is the dot-path of the offending field (`spec.files[2].path`). */
export class RenderError extends Error {
  override readonly name = "RenderError";
  constructor(
    readonly kind: RenderErrorKind,
    readonly field: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(field === "" ? message : `${field}: ${message}`, options);
  }
}
