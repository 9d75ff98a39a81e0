/**
 * Pure event filters (controller-runtime predicate.Predicate). They decide which events reach the
 * event handler; they never change what an informer caches.
 */
export interface Predicate<T> {
  create(obj: T): boolean;
  update(oldObj: T, newObj: T): boolean;
  delete(obj: T): boolean;
  generic(obj: T): boolean;
}

/** Fill in only some members; the missing ones let events through (predicate.Funcs). */
export function funcs<T>(p: Partial<Predicate<T>>): Predicate<T> {
  return {
    create: p.create ?? (() => true),
    update: p.update ?? (() => true),
    delete: p.delete ?? (() => true),
    generic: p.generic ?? (() => true),
  };
}

/** Passes an event only when every predicate passes it (an empty list passes everything). */
export function and<T>(...ps: Predicate<T>[]): Predicate<T> {
  return {
    create: (o) => ps.every((p) => p.create(o)),
    update: (a, b) => ps.every((p) => p.update(a, b)),
    delete: (o) => ps.every((p) => p.delete(o)),
    generic: (o) => ps.every((p) => p.generic(o)),
  };
}

/** Passes an event when any predicate passes it (an empty list passes nothing). */
export function or<T>(...ps: Predicate<T>[]): Predicate<T> {
  return {
    create: (o) => ps.some((p) => p.create(o)),
    update: (a, b) => ps.some((p) => p.update(a, b)),
    delete: (o) => ps.some((p) => p.delete(o)),
    generic: (o) => ps.some((p) => p.generic(o)),
  };
}

export function not<T>(p: Predicate<T>): Predicate<T> {
  return {
    create: (o) => !p.create(o),
    update: (a, b) => !p.update(a, b),
    delete: (o) => !p.delete(o),
    generic: (o) => !p.generic(o),
  };
}

/** Only events of the named kinds pass (e.g. `only("create")` for "Create events only"). */
export function only<T>(...kinds: Array<keyof Predicate<T>>): Predicate<T> {
  const on = new Set(kinds);
  return {
    create: () => on.has("create"),
    update: () => on.has("update"),
    delete: () => on.has("delete"),
    generic: () => on.has("generic"),
  };
}
