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
