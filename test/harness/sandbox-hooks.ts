import { afterEach } from "bun:test";
import { startSandbox, type Sandbox, type SandboxOptions } from "./sandbox.ts";

/**
 * Registers an afterEach that stops the sandbox the current test started; returns the function that
 * starts it. Call at the test file's top level; one sandbox per test.
 */
export function useSandbox(): (opts?: SandboxOptions) => Promise<Sandbox> {
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.stop();
    sandbox = undefined;
  });
  return async (opts) => {
    sandbox = await startSandbox(opts);
    return sandbox;
  };
}

/** Polls `f` every 20 ms until it returns something other than undefined; fails after `timeoutMs`. */
export const poll = async <T>(what: string, f: () => T | undefined, timeoutMs = 30_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
};
