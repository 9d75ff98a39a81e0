/**
 * An error as one line: its message followed by each cause's message not already contained in it
 * (`failed applying changed units: restart failed for kubelet.service, due failed`). Never a stack.
 */
export const errorText = (err: unknown): string => {
  let text = err instanceof Error ? err.message : String(err);
  const seen = new Set<unknown>([err]);
  let cause = err instanceof Error ? err.cause : undefined;
  while (cause !== undefined && cause !== null && !seen.has(cause)) {
    seen.add(cause);
    const msg = cause instanceof Error ? cause.message : String(cause);
    if (msg !== "" && !text.includes(msg)) text += `: ${msg}`;
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return text;
};
