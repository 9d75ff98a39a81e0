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
  return enqueueMapped<T>((obj) => [objectKeyOf(obj)]);
}

/** Every event enqueues the keys `map` returns for the object (handler.EnqueueRequestsFromMapFunc). */
export function enqueueMapped<T>(map: (obj: T) => readonly ObjectKey[]): EventHandler<T> {
  const addAll = (obj: T, q: Enqueuer) => {
    for (const k of map(obj)) q.add(k);
  };
  return {
    create: addAll,
    update: (oldObj, newObj, q) => {
      addAll(oldObj, q);
      addAll(newObj, q);
    },
    delete: addAll,
    generic: addAll,
  };
}
