/**
 * The object store: one cluster-wide resourceVersion counter, a bounded event history for watch resumption,
 * and write paths (create/update/patch/delete) that run the same decoding, strategies and validation as HTTP.
 */
import type { ResourceDef, ResourceRef } from "./resources.ts";
import type { UserInfo } from "./user.ts";
import type { Selector } from "./selectors.ts";
import { resolveDef, storageOf } from "./resources.ts";
import { decodeForStorage, toView } from "./event-view.ts";
import { alreadyExists, badRequest, conflict, invalid, notFound, serverError, staleConflict, SimApiError } from "./status.ts";
import { timeNow } from "./decode.ts";
import { orderMeta, randomSuffix } from "./object-meta.ts";
import type { FieldValidation } from "./decode.ts";
import { meta, prepareForCreate, prepareForUpdate } from "./strategy.ts";
import { validateObject } from "./validation.ts";
import { withWireDefaults } from "./wire-defaults.ts";
import { deepEqual, isObj, jsonMergePatch, strategicMergePatch } from "./merge-patch.ts";
import { applyJsonPatch } from "./json-patch.ts";
import { matchSelector, parseFieldSelector, parseLabelSelector, checkFieldSelector } from "./selectors.ts";

export type Obj = Record<string, unknown>;
export type EventType = "ADDED" | "MODIFIED" | "DELETED";
export type PatchKind = "merge" | "strategic" | "json";

export interface StoreEvent {
  readonly rv: number;
  readonly type: EventType;
  readonly def: ResourceDef;
  readonly object: Obj;
  /** The object before this event (MODIFIED, DELETED). */
  readonly prev?: Obj;
}

export interface WriteOptions {
  subresource?: string;
  /** Unknown fields: 400 (Strict), dropped with a warning collected here (Warn, the default) or dropped (Ignore). */
  fieldValidation?: FieldValidation;
  user?: UserInfo;
  /** For create/update through a URL: the namespace the request named. */
  namespace?: string;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

const key = (ns: string, name: string): string => `${ns}/${name}`;
const nsOf = (o: Obj): string => String(meta(o)["namespace"] ?? "");
const nameOf = (o: Obj): string => String(meta(o)["name"] ?? "");

export class SimStore {
  private rv = 1;
  private compactedRv = 0;
  private readonly objects = new Map<ResourceDef, Map<string, Obj>>();
  private readonly history: StoreEvent[] = [];
  private readonly listeners = new Set<(e: StoreEvent) => void>();

  constructor(
    private readonly historySize: number,
    /** Time source for server-set timestamps (creationTimestamp, deletionTimestamp). */
    readonly now: () => number = Date.now,
  ) {}

  get resourceVersion(): number {
    return this.rv;
  }

  /** Oldest resourceVersion a watch may resume from. */
  get oldestResumableVersion(): number {
    return this.compactedRv;
  }

  private bucket(def: ResourceDef): Map<string, Obj> {
    const stored = storageOf(def);
    let b = this.objects.get(stored);
    if (b === undefined) {
      b = new Map();
      this.objects.set(stored, b);
    }
    return b;
  }

  subscribe(fn: (e: StoreEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** How many subscriptions are open (a stopped watch hub leaves none). */
  get subscriptions(): number {
    return this.listeners.size;
  }

  private emit(e: StoreEvent): void {
    this.history.push(e);
    while (this.history.length > this.historySize) this.compactedRv = this.history.shift()!.rv;
    for (const l of [...this.listeners]) l(e);
  }

  /** Resolves true once the store reached resourceVersion `rv`, false after `ms`. */
  waitForVersion(rv: number, ms: number): Promise<boolean> {
    if (this.rv >= rv) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        off();
        resolve(false);
      }, ms);
      const off = this.subscribe(() => {
        if (this.rv < rv) return;
        clearTimeout(timer);
        off();
        resolve(true);
      });
    });
  }

  /** Forgets all history: every watch or exact list from an older resourceVersion now gets 410 Gone. */
  compact(): void {
    this.history.length = 0;
    this.compactedRv = this.rv;
  }

  /** Events after `rv` in order, or "expired" when the history no longer reaches back that far. */
  eventsSince(rv: number): StoreEvent[] | "expired" {
    if (rv < this.compactedRv) return "expired";
    return this.history.filter((e) => e.rv > rv);
  }

  /** Stores `o` (in stored form) and answers it as `view` shows it. */
  private write(view: ResourceDef, type: EventType, o: Obj, prev?: Obj): Obj {
    const def = storageOf(view);
    this.rv++;
    meta(o)["resourceVersion"] = String(this.rv);
    o["metadata"] = orderMeta(meta(o));
    const b = this.bucket(def);
    if (type === "DELETED") b.delete(key(nsOf(o), nameOf(o)));
    else b.set(key(nsOf(o), nameOf(o)), o);
    const e: StoreEvent = prev === undefined ? { rv: this.rv, type, def, object: o } : { rv: this.rv, type, def, object: o, prev };
    this.emit(e);
    return toView(view, structuredClone(o));
  }

  get(res: ResourceRef, namespace: string, name: string): Obj | undefined {
    const def = resolveDef(res);
    const o = this.bucket(def).get(key(def.namespaced ? namespace : "", name));
    return o === undefined ? undefined : toView(def, structuredClone(o));
  }

  /**
   * The stored object itself, not a copy (`get` copies): for read-only checks that run on every request or
   * poll (authorization, benches), where copying the object was a large part of the simulator's CPU. Never modify it.
   */
  peek(res: ResourceRef, namespace: string, name: string): Readonly<Obj> | undefined {
    const def = resolveDef(res);
    return this.bucket(def).get(key(def.namespaced ? namespace : "", name));
  }

  private mustGet(def: ResourceDef, namespace: string, name: string): Obj {
    const o = this.bucket(def).get(key(def.namespaced ? namespace : "", name));
    if (o === undefined) throw notFound(def, name);
    return o;
  }

  create(res: ResourceRef, body: unknown, opts: WriteOptions = {}): Obj {
    const def = resolveDef(res);
    const o = decodeForStorage(def, body, opts.fieldValidation);
    const m = meta(o);
    if (def.namespaced) {
      const ns = opts.namespace ?? String(m["namespace"] ?? "");
      if (opts.namespace !== undefined && m["namespace"] !== undefined && m["namespace"] !== "" && m["namespace"] !== opts.namespace)
        throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
      if (ns === "") throw badRequest("an empty namespace may not be set during creation");
      m["namespace"] = ns;
      if (this.get("namespaces", "", ns) === undefined) throw notFound({ group: "", resource: "namespaces" }, ns);
    }
    if ((m["name"] === undefined || m["name"] === "") && typeof m["generateName"] === "string" && m["generateName"] !== "")
      m["name"] = `${m["generateName"]}${randomSuffix()}`;
    if (m["resourceVersion"] !== undefined && m["resourceVersion"] !== "")
      throw serverError(500, "resourceVersion should not be set on objects to be created");
    delete m["resourceVersion"];
    prepareForCreate(def, o, opts.user === undefined ? { nowMs: this.now() } : { nowMs: this.now(), user: opts.user });
    const full = withWireDefaults(storageOf(def).resource, o);
    const errs = validateObject(def, full);
    if (errs.length > 0) throw invalid(def.group, def.kind, nameOf(full), errs);
    if (this.bucket(def).has(key(nsOf(full), nameOf(full)))) throw alreadyExists(def, nameOf(full));
    return this.write(def, "ADDED", full);
  }

  update(res: ResourceRef, body: unknown, opts: WriteOptions = {}): Obj {
    const def = resolveDef(res);
    const o = decodeForStorage(def, body, opts.fieldValidation);
    const m = meta(o);
    const ns = def.namespaced ? (opts.namespace ?? String(m["namespace"] ?? "")) : "";
    if (
      def.namespaced &&
      opts.namespace !== undefined &&
      m["namespace"] !== undefined &&
      m["namespace"] !== "" &&
      m["namespace"] !== opts.namespace
    )
      throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
    if (def.namespaced) m["namespace"] = ns;
    const name = nameOf(o);
    const old = this.bucket(def).get(key(ns, name));
    const sub = opts.subresource ?? "";
    if (old === undefined) {
      if (def.allowCreateOnUpdate && sub === "") {
        delete m["resourceVersion"];
        const { fieldValidation: _fv, ...rest } = opts;
        return this.create(def, toView(def, o), rest);
      }
      throw notFound(def, name);
    }
    return this.applyUpdate(def, o, old, sub);
  }

  private applyUpdate(def: ResourceDef, o: Obj, old: Obj, sub: string): Obj {
    const m = meta(o);
    const om = meta(old);
    const name = nameOf(old);
    const rv = m["resourceVersion"];
    if (rv !== undefined && rv !== "" && rv !== om["resourceVersion"]) throw staleConflict(def, name);
    if (m["uid"] !== undefined && m["uid"] !== "" && m["uid"] !== om["uid"])
      throw conflict(def, name, `Precondition failed: UID in precondition: ${String(m["uid"])}, UID in object meta: ${String(om["uid"])}`);
    prepareForUpdate(def, o, old, sub, this.now());
    m["resourceVersion"] = om["resourceVersion"];
    const full = withWireDefaults(storageOf(def).resource, o);
    const errs = validateObject(def, full, old);
    if (errs.length > 0) throw invalid(def.group, def.kind, name, errs);
    if (deepEqual(full, old)) return toView(def, structuredClone(old));
    const finalizers = m["finalizers"];
    if (om["deletionTimestamp"] !== undefined && (!Array.isArray(finalizers) || finalizers.length === 0))
      return this.write(def, "DELETED", full, old);
    return this.write(def, "MODIFIED", full, old);
  }

  patch(res: ResourceRef, namespace: string, name: string, type: PatchKind, patch: unknown, opts: WriteOptions = {}): Obj {
    const def = resolveDef(res);
    const old = this.mustGet(def, namespace, name);
    const base = toView(def, structuredClone(old));
    let patched: unknown;
    if (type === "json") patched = applyJsonPatch(base, patch);
    else if (type === "merge") patched = jsonMergePatch(base, patch);
    else patched = strategicMergePatch(def.resource, base, patch);
    const o = decodeForStorage(def, patched, opts.fieldValidation);
    const m = meta(o);
    if (m["name"] !== name) throw badRequest(`the name of the object (${String(m["name"])}) does not match the name on the URL (${name})`);
    if (def.namespaced && m["namespace"] !== namespace)
      throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
    return this.applyUpdate(def, o, old, opts.subresource ?? "");
  }

  /** Deletes now, or marks for deletion (finalizers, graceful pod deletion); `deleted` says which. */
  delete(res: ResourceRef, namespace: string, name: string, opts: DeleteOptions = {}): { object: Obj; deleted: boolean } {
    const def = resolveDef(res);
    const old = this.mustGet(def, namespace, name);
    const om = meta(old);
    const pre = opts.preconditions;
    if (pre?.uid !== undefined && pre.uid !== om["uid"])
      throw conflict(def, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(om["uid"])}`);
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== om["resourceVersion"])
      throw conflict(
        def,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${String(om["resourceVersion"])}`,
      );
    const grace = this.gracePeriod(def, old, opts);
    const finalizers = om["finalizers"];
    const pending = Array.isArray(finalizers) && finalizers.length > 0;
    if (pending || grace > 0) {
      if (om["deletionTimestamp"] !== undefined) return { object: toView(def, structuredClone(old)), deleted: false };
      const o = structuredClone(old);
      meta(o)["deletionTimestamp"] = timeNow(this.now() + grace * 1000);
      meta(o)["deletionGracePeriodSeconds"] = grace;
      return { object: this.write(def, "MODIFIED", o, old), deleted: false };
    }
    return { object: this.write(def, "DELETED", structuredClone(old), old), deleted: true };
  }

  /** Pods bound to a node and not finished are deleted gracefully (the kubelet would confirm); others at once. */
  private gracePeriod(def: ResourceDef, o: Obj, opts: DeleteOptions): number {
    if (def.resource !== "pods") return 0;
    const spec = isObj(o["spec"]) ? (o["spec"] as Obj) : {};
    const phase = isObj(o["status"]) ? (o["status"] as Obj)["phase"] : undefined;
    if (!spec["nodeName"] || phase === "Succeeded" || phase === "Failed") return 0;
    if (opts.gracePeriodSeconds !== undefined) return opts.gracePeriodSeconds;
    const t = spec["terminationGracePeriodSeconds"];
    return typeof t === "number" ? t : 30;
  }

  /** Matching objects sorted by namespace/name, as etcd returns them; `atRv` reconstructs an older state. */
  select(def: ResourceDef, namespace: string | undefined, sel: Selector, atRv?: number): Obj[] {
    const objs = new Map(this.bucket(def));
    if (atRv !== undefined && atRv < this.rv) {
      if (atRv < this.compactedRv) throw new SimApiError(410, "Expired", "The resourceVersion for the provided list is too old.");
      for (const e of [...this.history].reverse()) {
        if (e.rv <= atRv) break;
        if (e.def !== storageOf(def)) continue;
        const k = key(nsOf(e.object), nameOf(e.object));
        if (e.type === "ADDED") objs.delete(k);
        else if (e.prev !== undefined) objs.set(k, e.prev);
      }
    }
    const out: Obj[] = [];
    for (const [k, o] of [...objs.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (namespace !== undefined && namespace !== "" && !k.startsWith(`${namespace}/`)) continue;
      if (matchSelector(def.resource, sel, o)) out.push(toView(def, structuredClone(o)));
    }
    return out;
  }

  list(res: ResourceRef, opts: ListOptions = {}): Obj[] {
    const def = resolveDef(res);
    const fields = parseFieldSelector(opts.fieldSelector);
    checkFieldSelector(def.resource, fields);
    return this.select(def, opts.namespace, { labels: parseLabelSelector(opts.labelSelector), fields });
  }
}
