import { keyString } from "./reconcile.ts";
import type { ObjectKey } from "./reconcile.ts";
import type { KubeObject } from "./types.ts";

/** Where handlers put keys; the work queue drops duplicates, so handlers may enqueue freely. */
export interface Enqueuer {
  add(key: ObjectKey): void;
}

/** Turns events into keys and nothing else (controller-runtime handler.EventHandler). */
export interface EventHandler<T> {
  create(obj: T, q: Enqueuer): void;
  update(oldObj: T, newObj: T, q: Enqueuer): void;
  delete(obj: T, q: Enqueuer): void;
  generic(obj: T, q: Enqueuer): void;
}

export function objectKeyOf(obj: KubeObject): ObjectKey {
  return { namespace: obj.metadata.namespace ?? "", name: obj.metadata.name ?? "" };
}

/** Fill in only some members; the missing ones enqueue nothing (handler.Funcs). */
export function handlerFuncs<T>(h: Partial<EventHandler<T>>): EventHandler<T> {
  return {
    create: h.create ?? (() => {}),
    update: h.update ?? (() => {}),
    delete: h.delete ?? (() => {}),
    generic: h.generic ?? (() => {}),
  };
}

/** Every event enqueues the object's own key (on update: the new object's, and the old one's if it differs). */
export function enqueueObject<T extends KubeObject>(): EventHandler<T> {
  const add = (obj: T, q: Enqueuer) => q.add(objectKeyOf(obj));
  // An update enqueues the new object only (handler.EnqueueRequestForObject): adding the old key too
  // would run the key a second time when a waiting worker takes the first add at once.
  return { create: add, update: (_oldObj, newObj, q) => add(newObj, q), delete: add, generic: add };
}

/** Every event enqueues the keys `map` returns for the object (handler.EnqueueRequestsFromMapFunc). */
export function enqueueMapped<T>(map: (obj: T) => readonly ObjectKey[]): EventHandler<T> {
  const addAll = (obj: T, q: Enqueuer) => {
    for (const k of map(obj)) q.add(k);
  };
  return {
    create: addAll,
    // Old and new keys are deduplicated first, like controller-runtime's map handler does, so one
    // update never hands the same key to a worker twice.
    update: (oldObj, newObj, q) => {
      const seen = new Map<string, ObjectKey>();
      for (const k of [...map(oldObj), ...map(newObj)]) seen.set(keyString(k), k);
      for (const k of seen.values()) q.add(k);
    },
    delete: addAll,
    generic: addAll,
  };
}
