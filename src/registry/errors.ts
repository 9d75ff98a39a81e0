export class RegistryError extends Error {
  override readonly name: string = "RegistryError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}
