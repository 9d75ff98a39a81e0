export type { Kube, KubeList, KubeObject, OwnerReference, Selectors, WatchEvent } from "./types.ts";
export {
  ApiError,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  ifFound,
  isNotFound,
  isServerError,
  isTooManyRequests,
  isUnauthorized,
  TransportError,
} from "./errors.ts";
export { certificateSigningRequests, events, leases, nodes, pods, secrets } from "./resources.ts";
export type { Resource } from "./resources.ts";
export { keyString, RestartRequested, TerminalError } from "./reconcile.ts";
export type { ObjectKey, Reconcile, Result } from "./reconcile.ts";
export { loadKubeconfig, parseKubeconfig } from "./kubeconfig.ts";
export type { RestConfig } from "./kubeconfig.ts";
export { defaultUserAgent, KubeClient } from "./client.ts";
export { Informer, type ObjectTransform } from "./informer.ts";
export { InformerSet } from "./informer-set.ts";
export { CachedReader, liveReader } from "./readers.ts";
export type { Reader } from "./readers.ts";
export { defaultControllerRateLimiter } from "./rate-limiter.ts";
export { and, only, or } from "./predicate.ts";
export type { Predicate } from "./predicate.ts";
export { enqueueMapped, enqueueObject, objectKeyOf } from "./handler.ts";
export type { EventHandler } from "./handler.ts";
export { Channel } from "./source.ts";
export type { Source } from "./source.ts";
export { Controller, newController } from "./controller.ts";
export { reconcileTimeBuckets } from "./controller-metrics.ts";
export { isQualifiedNamePart } from "./names.ts";
export { controllerRef } from "./owner.ts";
export { findCondition, kubeTime, microTime, nodeCondition, patchNodeMetadata } from "./node.ts";
export type { ConditionState, ExistingCondition, NodeCondition } from "./node.ts";
