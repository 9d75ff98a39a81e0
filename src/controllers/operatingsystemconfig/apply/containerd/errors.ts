/** config.toml cannot be patched (bad version, a non-table in the way, unknown plugin op). */
export class ContainerdConfigError extends Error {
  override readonly name = "ContainerdConfigError";
}
