/** Bad command line (unknown command/flag, extra argument, bad flag value): one line on stderr, exit 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  constructor(message: string) {
    super(message);
  }
}
