/**
 * Each surface's own error format, in one place. Surface A (`/api`) answers with the seed's
 * record `{name, message, details[{Issue, Field, Location}]}`; Surface B (`/v1`) with RFC 9457
 * `application/problem+json` carrying `code` and `errors[{param, message}]`.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Refusal } from "../lib/platform/result.ts";

export type Surface = "api" | "v1" | "other";

export type FieldLocation = "body" | "path" | "query" | "header";

/** One wrong input: the dotted field path, where it was, and what is wrong with it. */
export interface FieldIssue {
  readonly field: string;
  readonly location: FieldLocation;
  readonly message: string;
}

export interface ErrorSpec {
  readonly status: ContentfulStatusCode;
  /** Surface B `code` (snake_case); Surface A derives its `name` from the status. */
  readonly code: string;
  readonly message: string;
  readonly issues?: readonly FieldIssue[];
  readonly headers?: Readonly<Record<string, string>>;
}

/** Surface A error names by status (DESIGN 6); 409/422 may carry a more specific one. */
const apiNames: Partial<Record<ContentfulStatusCode, string>> = {
  400: "VALIDATION_ERROR",
  401: "AUTHENTICATION_FAILURE",
  403: "NOT_AUTHORIZED",
  404: "RESOURCE_NOT_FOUND",
  405: "METHOD_NOT_ALLOWED",
  408: "REQUEST_TIMEOUT",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  422: "UNPROCESSABLE_ENTITY",
  429: "RATE_LIMIT_REACHED",
  500: "INTERNAL_SERVER_ERROR",
  503: "SERVICE_UNAVAILABLE",
};

/** Surface A names that replace the status's default for specific codes. */
const apiNamesByCode: Readonly<Record<string, string>> = {
  idempotency_key_reused: "IDEMPOTENCY_KEY_REUSED",
  idempotency_request_in_progress: "IDEMPOTENCY_REQUEST_IN_PROGRESS",
};

const problemTitles: Partial<Record<ContentfulStatusCode, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/**
 * The status of every refusal a service returns to a route, in one table. A code missing here
 * does not compile where a route maps it, so a new refusal cannot fall through to a 500.
 */
const refusalStatus = {
  not_found: 404,
  payee_not_found: 400,
  insufficient_funds: 409,
  amount_below_payee_fee: 400,
  duplicate_disbursement: 409,
  duplicate_simple_payment: 409,
  duplicate_document_name: 409,
  document_not_found: 400,
  document_not_custom: 400,
  document_already_used: 409,
  funding_uuid_reused: 409,
  not_cancelable: 409,
  not_resendable: 409,
  rate_limited: 429,
  contact_missing: 400,
  modalities_missing: 400,
  url_not_allowed: 400,
  key_not_found: 409,
  key_not_active: 409,
  key_already_rotated: 409,
} as const satisfies Record<string, ContentfulStatusCode>;

export type RefusalCode = keyof typeof refusalStatus;

/** Refusals a client sees under another code: a document that cannot be given is bad input. */
const wireCodes: Partial<Record<RefusalCode, string>> = {
  document_not_found: "validation_error",
  document_not_custom: "validation_error",
  modalities_missing: "validation_error",
};

/**
 * A service's refusal as an error of the request's surface: the status from the table, the
 * refusal's field (if any) as the issue, with `issue` as its message when given.
 */
export function refusalError(
  refusal: Refusal<RefusalCode>,
  options: { issue?: string; headers?: Readonly<Record<string, string>> } = {},
): ErrorSpec {
  return {
    status: refusalStatus[refusal.code],
    code: wireCodes[refusal.code] ?? refusal.code,
    message: refusal.message,
    issues: refusal.field === undefined
      ? undefined
      : [{ field: refusal.field, location: "body", message: options.issue ?? refusal.message }],
    headers: options.headers,
  };
}

export function surfaceOf(path: string): Surface {
  if (path === "/api" || path.startsWith("/api/")) return "api";
  if (path === "/v1" || path.startsWith("/v1/")) return "v1";
  return "other";
}

/** The status, content type and body of an error in a surface's format, as data. */
export function errorBody(
  surface: Surface,
  spec: ErrorSpec,
): { status: ContentfulStatusCode; contentType: string; body: Record<string, unknown> } {
  if (surface === "api") {
    return {
      status: spec.status,
      contentType: "application/json",
      body: {
        name: apiNamesByCode[spec.code] ?? apiNames[spec.status] ?? "ERROR",
        message: spec.message,
        details: (spec.issues ?? []).map((issue) => ({
          Issue: issue.message,
          Field: issue.field,
          Location: issue.location,
        })),
      },
    };
  }
  if (surface === "v1") {
    const body: Record<string, unknown> = {
      type: `/docs/errors#${spec.code}`,
      title: problemTitles[spec.status] ?? "Error",
      status: spec.status,
      detail: spec.message,
      code: spec.code,
    };
    if (spec.issues && spec.issues.length > 0) {
      body.errors = spec.issues.map((issue) => ({ param: issue.field, message: issue.message }));
    }
    return { status: spec.status, contentType: "application/problem+json", body };
  }
  return {
    status: spec.status,
    contentType: "application/json",
    body: { error: { code: spec.code, message: spec.message } },
  };
}

/** The error response for the surface the request came in on. */
export function errorResponse(c: Context, spec: ErrorSpec): Response {
  for (const [name, value] of Object.entries(spec.headers ?? {})) c.header(name, value);
  const { status, contentType, body } = errorBody(surfaceOf(c.req.path), spec);
  c.header("Content-Type", contentType);
  return c.body(JSON.stringify(body), status);
}
