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

/** Surface A error names by status (contract §6); 409/422 may carry a more specific one. */
const apiNames: Partial<Record<ContentfulStatusCode, string>> = {
  400: "VALIDATION_ERROR",
  401: "AUTHENTICATION_FAILURE",
  403: "NOT_AUTHORIZED",
  404: "RESOURCE_NOT_FOUND",
  405: "METHOD_NOT_ALLOWED",
  408: "REQUEST_TIMEOUT",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
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
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** What the errors page says of one error code: its status, and what it means and what to do. */
export interface ErrorCodeEntry {
  readonly status: ContentfulStatusCode;
  readonly meaning: string;
  readonly remedy: string;
}

/**
 * Every error code /api and /v1 answer with, in one table. The errors page (/docs/errors, one
 * anchor per code) and the OpenAPI `Problem.code` enum are generated from it, and the shared test
 * fixture validates every error response against that enum, so a new code cannot go undocumented.
 */
export const errorCatalogue = {
  validation_error: {
    status: 400,
    meaning: "A field of the body, the query, the path or a header is missing or not valid.",
    remedy:
      "Read `errors[]` (/v1) or `details[]` (/api): each names the field by its dotted path, where it was, and the rule it broke. Fix the request; it was not stored, so the same Idempotency-Key may be sent again.",
  },
  payee_not_found: {
    status: 400,
    meaning: "The /v1 disbursement names a payee id this line has not created.",
    remedy: "Create the payee with POST /v1/payees first, then create the disbursement.",
  },
  amount_below_payee_fee: {
    status: 400,
    meaning: "The amount does not cover the fee the payee would pay for an offered method.",
    remedy: "Raise the amount or offer other methods.",
  },
  contact_missing: {
    status: 400,
    meaning: "The payee has no e-mail or phone for the contact channel it asks for.",
    remedy: "Send the e-mail (contact_channel email) or the phone (sms), or change the channel.",
  },
  url_not_allowed: {
    status: 400,
    meaning:
      "The webhook URL is refused: not https in live, or its host is (or resolves to) a loopback, private, link-local or other special-purpose address.",
    remedy: "Register a public https URL (http://localhost is accepted in test).",
  },
  rail_not_configured: {
    status: 400,
    meaning:
      "None of a payee's allowed methods can be paid in live: the message names the methods and `details`/`errors` the field (`payees.{i}.allowed_payment_method_ids`, `allowed_payment_method_ids` or `modalities`). Live pays ACH and checks once the company's bank settings are stored (checks: with a check account), PayPal and Venmo once its PayPal settings are, virtual cards once its Lithic settings are, instant deposit once its Increase settings are; the test environment pays every method. Nothing was written.",
    remedy:
      "Allow a method whose rail the company has (ACH, check, PayPal, Venmo, virtual card, instant deposit) and have an operator store its settings (`deno task admin bank:set`, `paypal:set`, `lithic:set`, `increase:set`); a payee offered several methods sees only the payable ones.",
  },
  postage_not_mailable: {
    status: 400,
    meaning:
      "The company's postal checks are mailed by Lob, which mails checks First-Class only (FC, or PRS as certified mail with return receipt): the `check_postage_type` given (named in the message, the field in `details`/`errors`) cannot be mailed. Nothing was written.",
    remedy:
      "Send FC or PRS, or leave check_postage_type out so the payee picks among the codes Lob mails.",
  },
  ach_not_configured: {
    status: 400,
    meaning:
      "A live ACH funding needs the company's bank settings (its funding account is debited through its bank), and none are stored. Nothing was written.",
    remedy:
      "Have an operator store the company's bank settings (`deno task admin bank:set`, approved by a second admin), or fund by wire.",
  },
  authentication_failed: {
    status: 401,
    meaning:
      "No credential, or one that is unknown, expired, revoked or past its rotation grace period.",
    remedy:
      "On /v1 send `Authorization: Bearer sk_…` of the right environment; on /api authenticate again with POST /api/authenticate and send the new token.",
  },
  not_authorized: {
    status: 403,
    meaning:
      "The CompanyApiKey is unknown, revoked, or names a company the user does not belong to.",
    remedy: "Send the key of a company the user is a member of, or leave the header out.",
  },
  live_mode_forbidden: {
    status: 403,
    meaning: "The sandbox clock exists only in the test environment.",
    remedy: "Use a test credential (sk_test_… or a uak_test_… token).",
  },
  not_found: {
    status: 404,
    meaning:
      "Nothing at this path for this credential. Another company's or another line's resource is a 404 too, never a 403.",
    remedy: "Check the id, the environment of the key and, on /v1, the key's line.",
  },
  method_not_allowed: {
    status: 405,
    meaning: "The path exists but does not answer this HTTP method.",
    remedy: "Use one of the methods the `Allow` header lists.",
  },
  request_timeout: {
    status: 408,
    meaning: "The body did not arrive whole within BODY_TIMEOUT_MS (30 s by default).",
    remedy: "Nothing was done: send the request again.",
  },
  insufficient_funds: {
    status: 409,
    meaning:
      "Available funds do not cover what the request must hold; the message names the shortfall. Nothing was held.",
    remedy:
      "Add funds (POST /api/funds), wait for an ACH funding to become available, or send large_disbursement: true to wait for a wire.",
  },
  duplicate_disbursement: {
    status: 409,
    meaning: "This disbursement_uuid was already used with another body.",
    remedy:
      "Send the same body to read the existing record (200), or choose a new disbursement_uuid.",
  },
  duplicate_simple_payment: {
    status: 409,
    meaning: "This simple_payment_uuid was already used with another body.",
    remedy:
      "Send the same body to read the existing record (200), or choose a new simple_payment_uuid.",
  },
  duplicate_document_name: {
    status: 409,
    meaning: "The company already has a document of this name.",
    remedy: "Choose another name.",
  },
  document_already_used: {
    status: 409,
    meaning:
      "A one-time document goes to one payee only: it was already given to a payee (by an earlier create), or this request gives it to two payees; `details`/`errors` name the later payee's field.",
    remedy: "Upload another one-time document for each further payee.",
  },
  funding_uuid_reused: {
    status: 409,
    meaning: "This funding_uuid was already used with another body.",
    remedy: "Send the same body to read the existing funding (200), or choose a new funding_uuid.",
  },
  disbursement_not_pending_funds: {
    status: 409,
    meaning:
      "The funding names a disbursement_uuid whose payees no longer wait for funds (released by an earlier credit, or canceled). Nothing was funded.",
    remedy:
      "Send the funding without disbursement_uuid (its credit releases waiting disbursements oldest first), or name one that is PendingFunds.",
  },
  sanctions_list_missing: {
    status: 409,
    meaning:
      "Live payees are screened against the OFAC SDN list before they are paid, and no list is loaded: the create is refused rather than paying unscreened. Nothing was written.",
    remedy:
      "Have an operator load the list (`deno task admin ofac:load --file <sdn.csv>`), then send the request again (the same Idempotency-Key may be reused: nothing was stored).",
  },
  not_cancelable: {
    status: 409,
    meaning:
      "The payout is past the point of cancel: a method was selected, the funds were sent, or it already ended.",
    remedy:
      "Cancel only before a method is selected or after a failure; follow the payout to its end.",
  },
  payout_in_flight: {
    status: 409,
    meaning:
      "The payout's money is in flight: its rail entry is in a built bank file or batch, being transmitted, or transmitted, so the bank may pay it. Nothing was changed. (An entry only queued for the next cutoff is removed with the cancel instead.)",
    remedy:
      "Follow the payout: a failure or return makes it cancelable again. To stop the payment now, ask the operator of the service (they can void a file not yet sent, or record a recall request with the bank).",
  },
  not_resendable: {
    status: 409,
    meaning: "The payee is no longer waiting for a link: nothing is left for them to do.",
    remedy: "Read the payee's status; a resend helps only while the payee must act.",
  },
  key_not_found: {
    status: 409,
    meaning: "The calling key is no longer stored.",
    remedy: "Authenticate with a current key.",
  },
  key_not_active: {
    status: 409,
    meaning: "The calling key is revoked or past its grace period and cannot be rotated.",
    remedy: "Rotate with a current key.",
  },
  key_already_rotated: {
    status: 409,
    meaning: "The calling key was already replaced; it keeps working until its grace period ends.",
    remedy: "Use the key the earlier rotation returned.",
  },
  idempotency_request_in_progress: {
    status: 409,
    meaning:
      "A request with this Idempotency-Key is still running (its lease lasts 60 s). On /api the name is IDEMPOTENCY_REQUEST_IN_PROGRESS.",
    remedy: "Wait, then send it again: you will get the first request's answer.",
  },
  payload_too_large: {
    status: 413,
    meaning:
      "The body is larger than BODY_LIMIT_BYTES (1 MiB; documents 14 MiB), or a PDF is larger than DOCUMENT_SIZE_MAX_BYTES (10 MiB decoded).",
    remedy: "Send a smaller body or document.",
  },
  unsupported_media_type: {
    status: 415,
    meaning:
      "A body of /api or /v1 was sent with a Content-Type other than `application/json` (`charset=utf-8` is the only parameter allowed), or with none. Nothing was read or done.",
    remedy: "Send the body as JSON with `Content-Type: application/json`.",
  },
  idempotency_key_reused: {
    status: 422,
    meaning:
      "This Idempotency-Key was used within 24 hours with another method, path or body. On /api the name is IDEMPOTENCY_KEY_REUSED.",
    remedy: "Use a new key for a new request; send the same body to replay the first answer.",
  },
  rate_limited: {
    status: 429,
    meaning:
      "More than RATE_LIMIT_RPS requests per second with this credential, or more than 5 resends for one payee in an hour.",
    remedy: "Wait the seconds in `Retry-After`, then retry.",
  },
  internal_error: {
    status: 500,
    meaning: "The service failed; nothing you sent caused it.",
    remedy: "Retry with the same Idempotency-Key; quote the request id when reporting it.",
  },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof errorCatalogue;

/** The Surface A `name` of an error: a specific one for some codes, else the status's. */
export function apiErrorName(code: string, status: ContentfulStatusCode): string {
  return apiNamesByCode[code] ?? apiNames[status] ?? "ERROR";
}

/** Every Surface A `name` an error may carry. */
export const apiErrorNames: readonly string[] = [
  ...new Set([...Object.values(apiNames), ...Object.values(apiNamesByCode)]),
];

/**
 * The status of every refusal a service returns to a route, in one table. A code missing here
 * does not compile where a route maps it, so a new refusal cannot fall through to a 500.
 */
export const refusalStatus = {
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
  disbursement_not_found: 400,
  disbursement_other_line: 400,
  disbursement_not_pending_funds: 409,
  not_cancelable: 409,
  payout_in_flight: 409,
  not_resendable: 409,
  rate_limited: 429,
  contact_missing: 400,
  modalities_missing: 400,
  invalid_pay_by: 400,
  url_not_allowed: 400,
  key_not_found: 409,
  key_not_active: 409,
  key_already_rotated: 409,
  rail_not_configured: 400,
  postage_not_mailable: 400,
  ach_not_configured: 400,
  sanctions_list_missing: 409,
} as const satisfies Record<string, ContentfulStatusCode>;

export type RefusalCode = keyof typeof refusalStatus;

/** Refusals a client sees under another code: a document that cannot be given is bad input. */
const wireCodes = {
  document_not_found: "validation_error",
  document_not_custom: "validation_error",
  modalities_missing: "validation_error",
  invalid_pay_by: "validation_error",
  disbursement_not_found: "validation_error",
  disbursement_other_line: "validation_error",
} as const satisfies Partial<Record<RefusalCode, ErrorCode>>;

/** The codes refusals reach a client with; one missing from the catalogue fails to compile here. */
type WireCode =
  | Exclude<RefusalCode, keyof typeof wireCodes>
  | typeof wireCodes[keyof typeof wireCodes];
export const documentedRefusals: Readonly<Record<WireCode, ErrorCodeEntry>> = errorCatalogue;

/**
 * A service's refusal as an error of the request's surface: the status from the table, the
 * refusal's field (if any) as the issue, with `issue` as its message when given.
 */
export function refusalError(
  refusal: Refusal<RefusalCode>,
  options: { issue?: string; headers?: Readonly<Record<string, string>> } = {},
): ErrorSpec {
  const wire: Partial<Record<RefusalCode, ErrorCode>> = wireCodes;
  return {
    status: refusalStatus[refusal.code],
    code: wire[refusal.code] ?? refusal.code,
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
        name: apiErrorName(spec.code, spec.status),
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

/** The 429 of a credential past RATE_LIMIT_RPS, with when to try again. */
export function rateLimitedError(ratePerSecond: number, retryAfterSeconds: number): ErrorSpec {
  return {
    status: 429,
    code: "rate_limited",
    message: `more than ${ratePerSecond} requests per second with this credential`,
    headers: { "Retry-After": String(retryAfterSeconds) },
  };
}
