/** A Kubernetes API answered with a non-2xx status; classified by `status` and `reason`, never by text. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** The request never got an HTTP answer (connection refused, TLS failure, timeout, reset stream). */
export class TransportError extends Error {
  override readonly name = "TransportError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

const statusIs =
  (status: number) =>
  (err: unknown): err is ApiError =>
    err instanceof ApiError && err.status === status;

export const isNotFound = statusIs(404);
export const isConflict = statusIs(409);
export const isGone = statusIs(410);
export const isForbidden = statusIs(403);

/** What `request` resolves to, or undefined when the API server answers NotFound; other failures are thrown. */
export async function ifFound<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
export const isUnauthorized = statusIs(401);
export const isTooManyRequests = statusIs(429);
export const isAlreadyExists = (err: unknown): err is ApiError =>
  err instanceof ApiError && err.status === 409 && err.reason === "AlreadyExists";
export const isServerError = (err: unknown): err is ApiError => err instanceof ApiError && err.status >= 500;
