/** Kubernetes `Status` bodies and the error that carries one, shaped like kube-apiserver v1.32 answers. */

export interface StatusCause {
  reason?: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure" | "Success";
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code?: number;
}

/** A group and a plural resource name, e.g. { group: "coordination.k8s.io", resource: "leases" }. */
export interface GroupResource {
  group: string;
  resource: string;
}

/** An API failure; the handler turns it into a Status body with the same code. */
export class SimApiError extends Error {
  override readonly name = "SimApiError";
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  toStatus(): StatusBody {
    const body: StatusBody = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: this.message };
    if (this.reason !== "") body.reason = this.reason;
    if (this.details !== undefined) body.details = this.details;
    body.code = this.code;
    return body;
  }
}

function qualified(gr: GroupResource): string {
  return gr.group === "" ? gr.resource : `${gr.resource}.${gr.group}`;
}

function details(gr: GroupResource, name: string): StatusDetails {
  const d: StatusDetails = {};
  if (name !== "") d.name = name;
  if (gr.group !== "") d.group = gr.group;
  if (gr.resource !== "") d.kind = gr.resource;
  return d;
}

export const notFound = (gr: GroupResource, name: string): SimApiError =>
  new SimApiError(404, "NotFound", `${qualified(gr)} "${name}" not found`, details(gr, name));

export const alreadyExists = (gr: GroupResource, name: string): SimApiError =>
  new SimApiError(409, "AlreadyExists", `${qualified(gr)} "${name}" already exists`, details(gr, name));

export const conflict = (gr: GroupResource, name: string, why: string): SimApiError =>
  new SimApiError(409, "Conflict", `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${why}`, details(gr, name));

export const staleConflict = (gr: GroupResource, name: string): SimApiError =>
  conflict(gr, name, "the object has been modified; please apply your changes to the latest version and try again");

export function forbidden(gr: GroupResource, name: string, why: string): SimApiError {
  const msg =
    gr.resource === ""
      ? `forbidden: ${why}`
      : name === ""
        ? `${qualified(gr)} is forbidden: ${why}`
        : `${qualified(gr)} "${name}" is forbidden: ${why}`;
  return new SimApiError(403, "Forbidden", msg, details(gr, name));
}

export const unauthorized = (): SimApiError => new SimApiError(401, "Unauthorized", "Unauthorized");

export const badRequest = (msg: string): SimApiError => new SimApiError(400, "BadRequest", msg);

/** A field error as kube validation reports it ("Invalid value", "Required value", ...). */
export interface FieldError {
  type: "FieldValueInvalid" | "FieldValueRequired" | "FieldValueForbidden" | "FieldValueNotSupported" | "FieldValueDuplicate";
  field: string;
  detail: string;
  value?: unknown;
}

function fieldErrorText(e: FieldError): string {
  switch (e.type) {
    case "FieldValueRequired":
      return `Required value${e.detail ? `: ${e.detail}` : ""}`;
    case "FieldValueForbidden":
      return `Forbidden: ${e.detail}`;
    case "FieldValueDuplicate":
      return `Duplicate value: ${JSON.stringify(e.value)}`;
    case "FieldValueNotSupported":
      return `Unsupported value: ${JSON.stringify(e.value)}${e.detail ? `: ${e.detail}` : ""}`;
    default:
      return `Invalid value: ${JSON.stringify(e.value ?? "")}${e.detail ? `: ${e.detail}` : ""}`;
  }
}

/** 422 Invalid; `details.kind` is the Kind (not the resource), as the real server does. */
export function invalid(group: string, kind: string, name: string, errs: FieldError[]): SimApiError {
  const texts = errs.map((e) => `${e.field}: ${fieldErrorText(e)}`);
  const qkind = group === "" ? kind : `${kind}.${group}`;
  const msg = `${qkind} "${name}" is invalid: ${texts.length === 1 ? texts[0] : `[${texts.join(", ")}]`}`;
  const d: StatusDetails = {};
  if (name !== "") d.name = name;
  if (group !== "") d.group = group;
  d.kind = kind;
  d.causes = errs.map((e) => ({ reason: e.type, message: fieldErrorText(e), field: e.field }));
  return new SimApiError(422, "Invalid", msg, d);
}

/**
 * 422 of a JSON patch that does not apply: NewGenericServerResponse(422, …, isUnexpectedResponse=false) keeps
 * neither the patch error nor a cause, so `details` is `{}`. The error text stays on `cause` for the simulator's tests.
 */
export function unprocessablePatch(cause: string): SimApiError {
  const err = new SimApiError(422, "Invalid", "the server rejected our request due to an error in our request", {});
  err.cause = cause;
  return err;
}

/**
 * 415 from go-restful's route selection (a Content-Type the route does not consume) as the apiserver's service
 * error handler wraps it: NewGenericServerResponse(415, …) with go-restful's message and empty details.
 */
export const unsupportedMediaType = (): SimApiError => new SimApiError(415, "UnsupportedMediaType", "415: Unsupported Media Type", {});

export const expired = (msg: string): SimApiError => new SimApiError(410, "Expired", msg);

export function tooManyRequests(retryAfterSeconds: number): SimApiError {
  return new SimApiError(
    429,
    "TooManyRequests",
    "Too many requests, please try again later.",
    { retryAfterSeconds },
    { "Retry-After": String(retryAfterSeconds) },
  );
}

export function serverError(code: number, msg: string): SimApiError {
  switch (code) {
    case 503:
      return new SimApiError(503, "ServiceUnavailable", msg, { retryAfterSeconds: 1 }, { "Retry-After": "1" });
    case 504:
      return new SimApiError(504, "Timeout", msg, { retryAfterSeconds: 1 });
    default:
      return new SimApiError(code, "InternalError", `Internal error occurred: ${msg}`, { causes: [{ message: msg }] });
  }
}

export function successStatus(gr: GroupResource, name: string, uid: string): StatusBody {
  const d: StatusDetails = { name };
  if (gr.group !== "") d.group = gr.group;
  d.kind = gr.resource;
  d.uid = uid;
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details: d };
}

/** 504 of the watch cache when a requested resourceVersion does not arrive within 3 s. */
export function tooLargeResourceVersion(rv: number, current: number): SimApiError {
  return new SimApiError(504, "Timeout", `Too large resource version: ${rv}, current: ${current}`, {
    causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
    retryAfterSeconds: 1,
  });
}
