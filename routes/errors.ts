/**
 * Each surface's own error format, in one place. Surface A (`/api`) answers with the seed's
 * record `{name, message, details[{Issue, Field, Location}]}`; Surface B (`/v1`) with RFC 9457
 * `application/problem+json` carrying `code` and `errors[{param, message}]`.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

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
