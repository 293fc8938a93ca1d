/**
 * The Surface A (`/api`) part of the OpenAPI document: request bodies come from the schemas the
 * routes validate with (routes/api/schemas.ts), responses from routes/openapi/responses.ts; errors
 * are the seed's record (2.11).
 */
import type * as v from "valibot";
import type { Config } from "../../lib/platform/config.ts";
import { formatDollars } from "../../lib/platform/money.ts";
import { apiSchemas } from "../api/schemas.ts";
import {
  bodySchema,
  idempotencyKey,
  json,
  type JsonObject,
  ok,
  pathParam,
  ref,
  tagged,
  webhookPaths,
} from "./parts.ts";
import { apiEventNames } from "../v1/webhooks.ts";

const failure = (description: string) => ({ description, content: json(ref("ApiError")) });
const companyApiKey = {
  name: "CompanyApiKey",
  in: "header",
  required: false,
  description:
    "The company's key (cak_…); needed only by a user of several companies. An unknown or revoked key, or one of a company the user does not belong to, is 403.",
  schema: { type: "string", minLength: 1 },
};
/** What any /api request may be answered besides its own outcomes. */
const readErrors = {
  401: failure("AUTHENTICATION_FAILURE: no token, or an expired or unknown one."),
  403: failure(
    "NOT_AUTHORIZED: the CompanyApiKey is unknown, revoked, or names a company the user does not belong to.",
  ),
  429: failure("RATE_LIMIT_REACHED: see Retry-After."),
  500: failure("INTERNAL_SERVER_ERROR: quote the X-Request-Id when reporting it."),
};
/** A POST reads a body: it may be too large or too slow, whether or not the route wants one. */
const postErrors = {
  ...readErrors,
  408: failure(
    "REQUEST_TIMEOUT: the body did not arrive whole within BODY_TIMEOUT_MS (30 s by default): nothing was done.",
  ),
  413: failure("PAYLOAD_TOO_LARGE: the body exceeds BODY_LIMIT_BYTES (1 MiB by default)."),
  415: failure(
    "UNSUPPORTED_MEDIA_TYPE: a body was sent without `Content-Type: application/json` (charset=utf-8 is the only parameter allowed): nothing was done.",
  ),
};
const writeErrors = {
  ...postErrors,
  400: failure("VALIDATION_ERROR: `details[]` names each wrong field and where it was."),
  409: failure(
    "CONFLICT: refused by a business rule (the message says which), or IDEMPOTENCY_REQUEST_IN_PROGRESS: the same Idempotency-Key is still running.",
  ),
  422: failure("IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was used with another request."),
};
const notFound = failure("RESOURCE_NOT_FOUND: no such resource for this company.");
const payeePath = "/api/disbursements/{disbursement_uuid}/payees/{payee_uuid}";
const payeeParams = [pathParam("disbursement_uuid"), pathParam("payee_uuid"), companyApiKey];
const contactRule =
  'A payee must be reachable on every channel its delivery_options turn on: email when email is true, phone when sms is true (400 naming the field). An e-mail, phone, state or zip_code of "" is absent.';

/** Components and paths of Surface A. */
export function apiOpenApi(config: Config) {
  const schemas = apiSchemas(config);
  const body = (schema: v.GenericSchema) => ({ required: true, content: json(bodySchema(schema)) });
  const idempotency = idempotencyKey(config);
  const payableRule =
    "In live a payee's allowed methods must include one that can be paid: ACH (1) once the " +
    "company's bank settings are stored, postal checks (2) once they hold a check account, digital " +
    "checks (5) when CHECK_MICR_FONT names a MICR font too, Venmo (6) and PayPal (7) once its PayPal " +
    "settings are stored (else 400 naming the methods and allowed_payment_method_ids); the portal " +
    "offers only the payable ones. A live create while no " +
    "OFAC sanctions list is loaded is 409. The test environment pays every method.";
  const paths = {
    "/api/authenticate": {
      post: {
        summary: "Exchange Basic credentials (TIN, user API key) for a bearer token of 3600 s",
        description:
          "The token acts for one company. Without CompanyApiKey: the company the TIN names. With " +
          "it: the key's company, which the user must belong to and the TIN must name; a TIN " +
          "naming another company than the key's is 403, never overridden. Later requests may " +
          "send CompanyApiKey again to act for another company of the user.",
        security: [{ basic: [] }],
        parameters: [companyApiKey],
        responses: {
          200: ok("The token.", "Token"),
          ...postErrors,
          403: failure(
            "NOT_AUTHORIZED: the CompanyApiKey is unknown, revoked, of a company the user does not belong to, or of another company than the TIN names.",
          ),
          401: failure(
            "AUTHENTICATION_FAILURE: no Basic credentials, or a TIN and user key that do not match.",
          ),
        },
      },
    },
    "/api/funds": {
      post: {
        summary:
          `Add funds by ACH (a debit in the next cutoff's file, available two banking days after its effective date) or wire (at once), up to ${
            formatDollars(config.limits.FUNDING_AMOUNT_MAX_CENTS)
          } per funding (FUNDING_AMOUNT_MAX_CENTS; a payee's cap does not apply)`,
        description:
          "With a funding_uuid the request is also kept by that id: the same funding_uuid and body " +
          "again answers 200 with the existing record; another body with it is 409. A funding " +
          "with large_disbursement: true may name the disbursement_uuid of the large disbursement " +
          "waiting in PendingFunds it is for: its credit (a sandbox wire at once, an ACH when its debit clears) releases that one first, then the others oldest first; " +
          "released_disbursements says what it released.",
        parameters: [companyApiKey, idempotency],
        requestBody: body(schemas.addFunds),
        responses: {
          200: ok("The same funding_uuid and body again: the existing record.", "ApiFunding"),
          201: ok("The funding record.", "ApiFunding"),
          ...writeErrors,
          400: failure(
            "VALIDATION_ERROR: a field is not valid, the company has no such line, or disbursement_uuid names no disbursement of the company, one of another line, or comes without large_disbursement: true.",
          ),
          409: failure(
            "CONFLICT: the funding_uuid was used with another body, or the disbursement_uuid's payees no longer wait for funds; IDEMPOTENCY_REQUEST_IN_PROGRESS.",
          ),
        },
      },
      get: {
        summary:
          "The company's fundings, newest first (`?line=` for one line), each with what its credit released",
        parameters: [
          companyApiKey,
          {
            name: "limit",
            in: "query",
            schema: { type: "integer", minimum: 1, maximum: 100, default: 10 },
          },
          {
            name: "starting_after",
            in: "query",
            description: "The funding_uuid of the last funding of the previous page.",
            schema: { type: "string", minLength: 1 },
          },
          { name: "line", in: "query", schema: { type: "string", minLength: 1 } },
        ],
        responses: {
          200: ok("A page of fundings.", "ApiFundingList"),
          400: failure(
            "VALIDATION_ERROR: limit is not 1 to 100, starting_after names no funding, or the company has no such line.",
          ),
          ...readErrors,
        },
      },
    },
    "/api/balance": {
      get: {
        summary: "Balances of a business line (`?line=`, default the first)",
        parameters: [companyApiKey, {
          name: "line",
          in: "query",
          schema: { type: "string", minLength: 1 },
        }],
        responses: {
          200: ok("Balances in dollars.", "ApiBalance"),
          400: failure("VALIDATION_ERROR: the company has no such line."),
          ...readErrors,
        },
      },
    },
    "/api/ach/files": {
      get: {
        summary:
          "The company's ACH files of the token's environment, newest first: metadata and totals, never the content",
        description:
          "`date` is the effective entry date (bank-local, when the money settles), not the day the file was built.",
        parameters: [
          companyApiKey,
          {
            name: "date",
            in: "query",
            description: "Files whose effective entry date is this day.",
            schema: { type: "string", format: "date" },
          },
          {
            name: "status",
            in: "query",
            schema: {
              type: "string",
              enum: ["built", "transmitting", "transmitted", "in_doubt", "voided"],
            },
          },
          {
            name: "limit",
            in: "query",
            schema: { type: "integer", minimum: 1, maximum: 100, default: 10 },
          },
          {
            name: "starting_after",
            in: "query",
            description: "The id of the last file of the previous page.",
            schema: { type: "string", minLength: 1 },
          },
        ],
        responses: {
          200: ok("A page of files.", "ApiAchFileList"),
          400: failure(
            "VALIDATION_ERROR: date is not a calendar date, status is not a file state, limit is not 1 to 100, or starting_after names no file of the company.",
          ),
          ...readErrors,
        },
      },
    },
    "/api/ach/files/{id}": {
      get: {
        summary:
          "One ACH file with its entries: trace, amount, the payout or funding, the account's last four digits, status",
        parameters: [pathParam("id", "The file's id (rbt_…)."), companyApiKey],
        responses: {
          200: ok("The file.", "ApiAchFileDetail"),
          404: notFound,
          ...readErrors,
        },
      },
    },
    "/api/checks": {
      get: {
        summary:
          "The company's checks of the token's environment in number order: amount, status, payout, issue and paid dates (never an account number)",
        parameters: [
          companyApiKey,
          {
            name: "status",
            in: "query",
            schema: { type: "string", enum: ["issued", "paid", "voided", "stale"] },
          },
          {
            name: "number",
            in: "query",
            description: "One check number.",
            schema: { type: "string", pattern: "^[1-9]\\d{0,8}$" },
          },
          {
            name: "from",
            in: "query",
            description: "Checks issued on or after this day (bank-local).",
            schema: { type: "string", format: "date" },
          },
          {
            name: "to",
            in: "query",
            description: "Checks issued on or before this day (bank-local).",
            schema: { type: "string", format: "date" },
          },
          {
            name: "limit",
            in: "query",
            schema: { type: "integer", minimum: 1, maximum: 100, default: 10 },
          },
          {
            name: "starting_after",
            in: "query",
            description: "The number of the last check of the previous page.",
            schema: { type: "string", minLength: 1, pattern: "^[1-9]\\d{0,8}$" },
          },
        ],
        responses: {
          200: ok("A page of checks.", "ApiCheckList"),
          400: failure(
            "VALIDATION_ERROR: status is not a check state, number or starting_after is not a check number (or names no check), from or to is not a calendar date, to is before from, or limit is not 1 to 100.",
          ),
          ...readErrors,
        },
      },
    },
    "/api/checks/{number}": {
      get: {
        summary: "One check of the company by its number",
        parameters: [pathParam("number", "The check number."), companyApiKey],
        responses: {
          200: ok("The check.", "ApiCheck"),
          400: failure("VALIDATION_ERROR: number is not a check number."),
          404: notFound,
          ...readErrors,
        },
      },
    },
    "/api/checks/{number}/void": {
      post: {
        summary:
          "Void an issued check, with a reason; audited. The void goes in the next positive-pay file, and the payout fails (check_voided) and is re-offered once that file was sent and the bank's paid items a business day later show the check unpaid",
        description:
          "Any user of the company may void its checks. A check voided or stale already is answered as it is. A paid check cannot be voided: 400 naming `number`, and nothing is written. Idempotency-Key applies.",
        parameters: [pathParam("number", "The check number."), companyApiKey, idempotency],
        requestBody: body(schemas.voidCheck),
        responses: {
          200: ok("The check, voided.", "ApiCheck"),
          404: notFound,
          ...writeErrors,
          400: failure(
            "VALIDATION_ERROR: number is not a check number or names a paid check, or reason is missing, empty or longer than 500 characters.",
          ),
        },
      },
    },
    "/api/check-files": {
      get: {
        summary:
          "The company's check files of the token's environment, newest first: positive-pay and print files, metadata only",
        parameters: [
          companyApiKey,
          {
            name: "kind",
            in: "query",
            schema: { type: "string", enum: ["positive_pay", "print"] },
          },
          {
            name: "status",
            in: "query",
            schema: {
              type: "string",
              enum: ["built", "transmitting", "transmitted", "in_doubt", "voided"],
            },
          },
          {
            name: "limit",
            in: "query",
            schema: { type: "integer", minimum: 1, maximum: 100, default: 10 },
          },
          {
            name: "starting_after",
            in: "query",
            description: "The id of the last file of the previous page.",
            schema: { type: "string", minLength: 1 },
          },
        ],
        responses: {
          200: ok("A page of check files.", "ApiCheckFileList"),
          400: failure(
            "VALIDATION_ERROR: kind or status is not one of its values, limit is not 1 to 100, or starting_after names no file of the company.",
          ),
          ...readErrors,
        },
      },
    },
    "/api/check-files/{id}": {
      get: {
        summary: "One check file's metadata (never its content: it holds the account number)",
        parameters: [pathParam("id", "The file's id (rbt_…)."), companyApiKey],
        responses: {
          200: ok("The file.", "ApiCheckFile"),
          404: notFound,
          ...readErrors,
        },
      },
    },
    "/api/sandbox/clock": {
      get: {
        summary:
          "The company's sandbox time (test tokens only); it moves only forward, there is no reset",
        parameters: [companyApiKey],
        responses: {
          200: ok("The sandbox time.", "SandboxClockReading"),
          ...readErrors,
          403: failure("NOT_AUTHORIZED: a live token, or a CompanyApiKey the user may not use."),
        },
      },
    },
    "/api/sandbox/clock/advance": {
      post: {
        summary: "Move the company's sandbox clock (test tokens only)",
        parameters: [companyApiKey],
        requestBody: {
          required: true,
          content: json({
            type: "object",
            required: ["seconds"],
            properties: { seconds: { type: "integer", minimum: 1, maximum: 31_536_000 } },
          }),
        },
        responses: {
          200: ok("The new sandbox time.", "SandboxClock"),
          400: failure("VALIDATION_ERROR: seconds is not a whole number of 1 to 31,536,000."),
          ...postErrors,
          403: failure("NOT_AUTHORIZED: a live token, or a CompanyApiKey the user may not use."),
        },
      },
    },
    "/api/disbursements": {
      post: {
        summary:
          "Create a disbursement of up to 500 payees; every payee is held or none. The same disbursement_uuid " +
          "with the same body answers 200 with the same record; with another body 409.",
        description:
          `${contactRule} payee_uuid and party_uuid are unique within the request, and ` +
          "every permission_required_from names a party of authorization_parties (400 naming the field). " +
          payableRule,
        parameters: [companyApiKey, idempotency],
        requestBody: body(schemas.createDisbursement),
        responses: {
          200: ok("The same request again: the existing record.", "ApiDisbursement"),
          201: ok("Created.", "ApiDisbursement"),
          ...writeErrors,
          409: failure(
            "CONFLICT: the disbursement_uuid with another body, short funds (the message names the " +
              "shortfall), or a one-time custom document already signed or given to two payees of " +
              "this request (`details` names the second payee's `payees.{i}.custom_document_uuids.{j}`).",
          ),
        },
      },
    },
    "/api/disbursements/{disbursement_uuid}": {
      get: {
        summary: "Get a disbursement",
        parameters: [pathParam("disbursement_uuid"), companyApiKey],
        responses: { 200: ok("The record.", "ApiDisbursement"), 404: notFound, ...readErrors },
      },
    },
    [payeePath]: {
      get: {
        summary: "Get a payee of a disbursement",
        parameters: payeeParams,
        responses: { 200: ok("The payee.", "ApiPayee"), 404: notFound, ...readErrors },
      },
    },
    [`${payeePath}/cancel`]: {
      post: {
        summary: "Cancel a payee before a method is selected, or after a failure",
        parameters: [...payeeParams, idempotency],
        responses: {
          200: ok("Canceled; everything held returns to available.", "ApiPayee"),
          404: notFound,
          ...writeErrors,
        },
      },
    },
    [`${payeePath}/resend-notification`]: {
      post: {
        summary: "Send the payee a fresh link (the old one stops working); 5 per payee per hour",
        parameters: [...payeeParams, idempotency],
        responses: {
          202: ok("Sent.", "ApiResent"),
          404: notFound,
          ...writeErrors,
          409: failure(
            "CONFLICT: the payee has nothing left to do (or waits for funds); IDEMPOTENCY_REQUEST_IN_PROGRESS.",
          ),
          429: failure(
            "RATE_LIMIT_REACHED: more requests per second than allowed, or a sixth resend for this payee within an hour; see Retry-After.",
          ),
        },
      },
    },
    [`${payeePath}/transaction`]: {
      get: {
        summary:
          "The payee's transaction: status, amount, fees, billed amount, method, dates, rail reference, history",
        parameters: payeeParams,
        responses: { 200: ok("The transaction.", "ApiTransaction"), 404: notFound, ...readErrors },
      },
    },
    [`${payeePath}/signed-documents`]: {
      get: {
        summary: "Documents the payee signed, each with a link that expires after 15 minutes",
        parameters: payeeParams,
        responses: {
          200: ok("Signed documents.", "ApiSignedDocuments"),
          404: notFound,
          ...readErrors,
        },
      },
    },
    "/api/documents": {
      post: {
        summary: "Upload a PDF (at most 10 MiB decoded; names unique per company)",
        description:
          "The PDF is parsed whole before it is kept, as signing will: a 400 naming pdf_base64 " +
          "when it does not start with %PDF-, cannot be read, is encrypted, or has no page. " +
          "one_time_use is for doc_type_id 4 (Custom) only.",
        parameters: [companyApiKey, idempotency],
        requestBody: body(schemas.uploadDocument),
        responses: {
          201: ok("Stored.", "ApiDocumentUploaded"),
          ...writeErrors,
          413: failure("PAYLOAD_TOO_LARGE: the decoded PDF or the body is too large."),
        },
      },
    },
    "/api/documents/{document_uuid}": {
      get: {
        summary:
          "A document's record (doc_type_id 1 After Payee Authentication, 2 ACH Authorization, " +
          "3 Authorization Party Approval, 4 Custom)",
        parameters: [pathParam("document_uuid"), companyApiKey],
        responses: { 200: ok("The record.", "ApiDocument"), 404: notFound, ...readErrors },
      },
    },
    "/api/documents/{document_uuid}/content": {
      get: {
        summary: "The uploaded PDF",
        parameters: [pathParam("document_uuid"), companyApiKey],
        responses: {
          200: {
            description: "The PDF.",
            content: { "application/pdf": { schema: { type: "string", format: "binary" } } },
          },
          404: notFound,
          ...readErrors,
        },
      },
    },
    "/api/simple-payments": {
      post: {
        summary: "Pay one recipient with a memo; they choose the method through their link",
        description:
          `${contactRule} The same simple_payment_uuid with the same body answers 200 with ` +
          `the existing record; with another body 409. ${payableRule}`,
        parameters: [companyApiKey, idempotency],
        requestBody: body(schemas.simplePayment),
        responses: {
          200: ok("The same request again: the existing record.", "ApiSimplePayment"),
          201: ok("Created.", "ApiSimplePayment"),
          ...writeErrors,
        },
      },
    },
    "/api/simple-payments/{simple_payment_uuid}": {
      get: {
        summary: "Get a simple payment with its status and link state",
        parameters: [pathParam("simple_payment_uuid"), companyApiKey],
        responses: { 200: ok("The record.", "ApiSimplePayment"), 404: notFound, ...readErrors },
      },
    },
    ...webhookPaths({
      prefix: "/api",
      eventNames: apiEventNames,
      parameters: [companyApiKey],
      idempotencyKey: idempotency,
      endpoint: "ApiWebhookEndpoint",
      registered: "ApiWebhookEndpointRegistered",
      endpointList: "ApiWebhookEndpointList",
      notFound,
      readErrors,
      postErrors,
      writeErrors,
    }),
  };
  // Every operation but authenticate takes the bearer token it returns.
  for (const operations of Object.values(paths) as Record<string, JsonObject>[]) {
    for (const operation of Object.values(operations)) operation.security ??= [{ apiToken: [] }];
  }
  return { paths: tagged("Surface A (/api)", paths as Record<string, Record<string, JsonObject>>) };
}
