export type {
  Kube,
  KubeList,
  KubeObject,
  ListOptions,
  ObjectMeta,
  OwnerReference,
  PatchType,
  RequestOptions,
  Selectors,
  WatchEvent,
  WatchEventType,
  WatchOptions,
  WriteOptions,
} from "./types.ts";
export {
  ApiError,
  TransportError,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isNotFound,
  isServerError,
  isTooManyRequests,
  isTransport,
  isUnauthorized,
} from "./errors.ts";
export {
  apiVersionOf,
  certificateSigningRequests,
  configMaps,
  events,
  leases,
  nodes,
  pods,
  resourcePath,
  secrets,
} from "./resources.ts";
export type { Resource } from "./resources.ts";
export { keyString, RestartRequested, TerminalError } from "./reconcile.ts";
export type { ObjectKey, Reconcile, Result } from "./reconcile.ts";
export { KubeconfigError, loadKubeconfig, normaliseServer, parseKubeconfig, restConfigFromValues } from "./kubeconfig.ts";
export type { ExplicitConfig, LoadOptions, PathResolver, RestConfig } from "./kubeconfig.ts";
export { authSourceFor, TokenFileSource } from "./credentials.ts";
export type { AuthSource, Credentials, ReadTextFile, StatFile } from "./credentials.ts";
export { defaultUserAgent, KubeClient } from "./client.ts";
export type { KubeClientOptions } from "./client.ts";
export { decodeWatchLine, watchQuery } from "./watch.ts";
export { LineSplitter, readLines } from "./line-reader.ts";
export { Informer } from "./informer.ts";
export type { InformerHandlers, InformerOptions } from "./informer.ts";
export { InformerSet } from "./informer-set.ts";
export type { InformerSetOptions } from "./informer-set.ts";
export { CachedReader, liveReader, NotCachedError } from "./readers.ts";
export type { Reader } from "./readers.ts";
export { WorkQueue } from "./queue.ts";
export {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  TokenBucket,
} from "./rate-limiter.ts";
export type { ControllerRateLimiterOptions, RateLimiter } from "./rate-limiter.ts";
export { and, funcs, not, only, or } from "./predicate.ts";
export type { Predicate } from "./predicate.ts";
export { enqueueMapped, enqueueObject, handlerFuncs, objectKeyOf } from "./handler.ts";
export type { Enqueuer, EventHandler } from "./handler.ts";
export { Channel } from "./source.ts";
export type { EventSink, Source } from "./source.ts";
export { Controller } from "./controller.ts";
export type { ControllerOptions } from "./controller.ts";
export { reconcileTimeBuckets } from "./controller-metrics.ts";
export type { ControllerStats, ReconcileOutcome } from "./controller-metrics.ts";
