/** Waiting for a condition on one stored object, driven by store events (no polling). */
import type { Obj, SimStore } from "./store.ts";
import type { ResourceRef } from "./resources.ts";
import { resolveDef, storageOf } from "./resources.ts";

export class WaitTimeoutError extends Error {
  override readonly name = "WaitTimeoutError";
  constructor(
    message: string,
    readonly last: Obj | undefined,
  ) {
    super(message);
  }
}

export function waitForObject(
  store: SimStore,
  res: ResourceRef,
  namespace: string,
  name: string,
  predicate: (o: Obj | undefined) => boolean,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Obj | undefined> {
  const def = resolveDef(res);
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const o = store.get(def, namespace, name);
      if (!predicate(o)) return false;
      done();
      resolve(o);
      return true;
    };
    const onAbort = () => {
      done();
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      done();
      reject(
        new WaitTimeoutError(
          `timed out after ${timeoutMs} ms waiting for ${def.resource} ${namespace}/${name}`,
          store.get(def, namespace, name),
        ),
      );
    }, timeoutMs);
    const unsubscribe = store.subscribe((e) => {
      if (e.def === storageOf(def)) check();
    });
    function done() {
      clearTimeout(timer);
      unsubscribe();
      signal?.removeEventListener("abort", onAbort);
    }
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    check();
  });
}
