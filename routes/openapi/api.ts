/**
 * The Surface A (`/api`) part of the OpenAPI document: request bodies come from the schemas the
 * routes validate with (routes/api/schemas.ts); errors are the seed's record (2.11).
 */
import type * as v from "valibot";
import type { Config } from "../../lib/platform/config.ts";
import { formatDollars } from "../../lib/platform/money.ts";
import { apiSchemas } from "../api/schemas.ts";
import {
  endpointHealthProperties,
  idempotencyKey,
  json,
  type JsonObject,
  ok,
  pathParam,
  ref,
  webhookPaths,
} from "./parts.ts";
import { apiEventNames } from "../v1/webhooks.ts";

const failure = (description: string) => ({ description, content: json(ref("ApiError")) });
const companyApiKey = {
  name: "CompanyApiKey",
  in: "header",
  required: false,
  description:
    "The company's key; needed only by a user of several companies. An unknown or revoked key, or one of a company the user does not belong to, is 403.",
  schema: { type: "string" },
};
const errors = {
  400: failure("VALIDATION_ERROR: `details[]` names each wrong field and where it was."),
  401: failure("AUTHENTICATION_FAILURE: no token, or an expired or unknown one."),
  403: failure(
    "NOT_AUTHORIZED: the CompanyApiKey is unknown, revoked, or names a company the user does not belong to.",
  ),
  429: failure("RATE_LIMIT_REACHED: see Retry-After."),
};
const writeErrors = {
  ...errors,
  408: failure(
    "REQUEST_TIMEOUT: the body did not arrive whole within BODY_TIMEOUT_MS (30 s by default): nothing was done.",
  ),
  409: failure(
    "CONFLICT: refused by a business rule (duplicate, not cancelable, insufficient funds…).",
  ),
  422: failure("IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was used with another request."),
};
const notFound = failure("RESOURCE_NOT_FOUND: no such resource for this company.");
const dollars = { type: "number", description: "US dollars, at most two decimals." };
const seedTime = {
  type: "string",
  description: "UTC, YYYY-MM-DD HH:MM:SS",
  pattern: "^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$",
};
const text = { type: ["string", "null"] };
const payeePath = "/api/disbursements/{disbursement_uuid}/payees/{payee_uuid}";
const payeeParams = [pathParam("disbursement_uuid"), pathParam("payee_uuid"), companyApiKey];

const payeeRecord = {
  type: "object",
  required: ["payee_uuid", "amount", "status"],
  properties: {
    payee_type_id: { type: "integer", minimum: 1, maximum: 4 },
    amount: dollars,
    payee_uuid: { type: "string" },
    email: text,
    first_name: text,
    last_name: text,
    address_one: text,
    address_two: text,
    city: text,
    state: text,
    zip_code: text,
    phone: text,
    delivery_options: {
      type: "object",
      properties: { email: { type: "boolean" }, sms: { type: "boolean" } },
    },
    allowed_payment_method_ids: { type: "array", items: { type: "integer" } },
    permission_required_from: { type: "array", items: { type: "string" } },
    field_values: { type: "array", items: { type: "object" } },
    status: { type: "string", examples: ["PendingAuthorizationPartiesPermission"] },
  },
};

/** Components and paths of Surface A; `bodySchema` turns a valibot schema into JSON Schema. */
export function apiOpenApi(config: Config, bodySchema: (schema: v.GenericSchema) => JsonObject) {
  const schemas = apiSchemas(config);
  const body = (schema: v.GenericSchema) => ({ required: true, content: json(bodySchema(schema)) });
  const components = {
    ApiError: {
      type: "object",
      required: ["name", "message", "details"],
      properties: {
        name: { type: "string", examples: ["VALIDATION_ERROR"] },
        message: { type: "string" },
        details: {
          type: "array",
          items: {
            type: "object",
            required: ["Issue", "Field", "Location"],
            properties: {
              Issue: { type: "string" },
              Field: { type: "string" },
              Location: { enum: ["body", "path", "query", "header"] },
            },
          },
        },
      },
    },
    ApiPayee: payeeRecord,
    ApiDisbursement: {
      type: "object",
      required: [
        "disbursement_uuid",
        "payor_email",
        "authorization_parties",
        "payees",
        "created_at",
      ],
      properties: {
        disbursement_uuid: { type: "string" },
        payor_email: text,
        authorization_parties: {
          type: "array",
          description: "Without party_type and Company_name.",
          items: {
            type: "object",
            properties: {
              party_uuid: { type: "string" },
              title: text,
              email: text,
              first_name: text,
              last_name: text,
              phone: text,
            },
          },
        },
        payees: { type: "array", items: ref("ApiPayee") },
        created_at: seedTime,
      },
    },
    ApiFunding: {
      type: "object",
      required: ["funding_uuid", "payment_method", "amount", "status"],
      properties: {
        funding_uuid: { type: "string" },
        payment_method: { enum: ["ACH", "WireTransfer"] },
        amount: dollars,
        status: { enum: ["Pending", "Completed", "Returned"] },
        expected_available_at: { type: ["string", "null"], format: "date-time" },
      },
    },
    ApiSimplePayment: {
      type: "object",
      required: ["simple_payment_uuid", "amount", "status", "link"],
      properties: {
        simple_payment_uuid: { type: "string" },
        amount: dollars,
        memo: text,
        status: { type: "string" },
        status_id: { type: "integer" },
        link: {
          type: "object",
          properties: {
            state: { enum: ["not_sent", "sent", "verified", "expired"] },
            expires_at: { oneOf: [seedTime, { type: "null" }] },
          },
        },
        created_at: seedTime,
      },
    },
  };
  const webhookEndpoint = {
    type: "object",
    properties: {
      id: { type: "string" },
      url: { type: "string", format: "uri" },
      events: { type: "array", items: { enum: apiEventNames } },
      description: text,
      ...endpointHealthProperties,
      secret: { type: "string", description: "whsec_…, in the creation response only." },
    },
  };
  const paths = {
    "/api/authenticate": {
      post: {
        summary: "Exchange Basic credentials (TIN, user API key) for a bearer token of 3600 s",
        security: [{ basic: [] }],
        parameters: [companyApiKey],
        responses: {
          200: ok("The token.", {
            type: "object",
            properties: {
              access_token: { type: "string" },
              token_type: { const: "Bearer" },
              expires_in: { const: 3600 },
            },
          }),
          401: errors[401],
          403: errors[403],
          429: errors[429],
        },
      },
    },
    "/api/funds": {
      post: {
        summary: `Add funds by ACH (available after 3 business days) or wire (at once), up to ${
          formatDollars(config.limits.FUNDING_AMOUNT_MAX_CENTS)
        } per funding (FUNDING_AMOUNT_MAX_CENTS; a payee's cap does not apply)`,
        parameters: [companyApiKey, idempotencyKey],
        requestBody: body(schemas.addFunds),
        responses: { 201: ok("The funding record.", ref("ApiFunding")), ...writeErrors },
      },
    },
    "/api/balance": {
      get: {
        summary: "Balances of a business line (`?line=`, default the first)",
        parameters: [companyApiKey, { name: "line", in: "query", schema: { type: "string" } }],
        responses: { 200: ok("Balances in dollars.", { type: "object" }), ...errors },
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
          200: ok("The new sandbox time.", { type: "object" }),
          ...errors,
          403: failure("NOT_AUTHORIZED: a live token, or a CompanyApiKey the user may not use."),
        },
      },
    },
    "/api/disbursements": {
      post: {
        summary:
          "Create a disbursement of up to 500 payees; every payee is held or none. The same disbursement_uuid " +
          "with the same body answers 200 with the same record; with another body 409.",
        parameters: [companyApiKey, idempotencyKey],
        requestBody: body(schemas.createDisbursement),
        responses: {
          200: ok("The same request again: the existing record.", ref("ApiDisbursement")),
          201: ok("Created.", ref("ApiDisbursement")),
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
        responses: { 200: ok("The record.", ref("ApiDisbursement")), 404: notFound, ...errors },
      },
    },
    [payeePath]: {
      get: {
        summary: "Get a payee of a disbursement",
        parameters: payeeParams,
        responses: { 200: ok("The payee.", ref("ApiPayee")), 404: notFound, ...errors },
      },
    },
    [`${payeePath}/cancel`]: {
      post: {
        summary: "Cancel a payee before a method is selected, or after a failure",
        parameters: [...payeeParams, idempotencyKey],
        responses: {
          200: ok("Canceled; everything held returns to available.", ref("ApiPayee")),
          404: notFound,
          ...writeErrors,
        },
      },
    },
    [`${payeePath}/resend-notification`]: {
      post: {
        summary: "Send the payee a fresh link (the old one stops working); 5 per payee per hour",
        description:
          "Right after the create, before the payee was first told, this sends that first notice " +
          "(the offer, or the request for endorsements) at once instead of a reminder; the " +
          "scheduled first notice then sends nothing. 409 while the disbursement waits for funds, " +
          "or once the payee is past acting (completed, canceled).",
        parameters: [...payeeParams, idempotencyKey],
        responses: {
          202: ok("Sent.", {
            type: "object",
            properties: {
              disbursement_uuid: { type: "string" },
              payee_uuid: { type: "string" },
              channels: { type: "array", items: { enum: ["email", "sms"] } },
              sent_at: seedTime,
            },
          }),
          404: notFound,
          ...writeErrors,
        },
      },
    },
    [`${payeePath}/transaction`]: {
      get: {
        summary:
          "The payee's transaction: status, amount, fees, billed amount, method, dates, rail reference, history",
        parameters: payeeParams,
        responses: {
          200: ok("The transaction.", {
            type: "object",
            required: ["status", "amount", "fees", "billed_amount", "history"],
            properties: {
              status: { type: "string" },
              status_id: { type: "integer" },
              amount: dollars,
              fees: {
                type: "object",
                properties: { payor_fee: dollars, service_fee: dollars, payee_fee: dollars },
              },
              billed_amount: dollars,
              net_amount: dollars,
              held_amount: dollars,
              payment_method_id: { type: ["integer", "null"] },
              payment_method: text,
              account_last_four: text,
              rail_reference: text,
              failure_reason: text,
              history: {
                type: "array",
                items: {
                  type: "object",
                  properties: { status: { type: "string" }, at: seedTime, detail: text },
                },
              },
            },
          }),
          404: notFound,
          ...errors,
        },
      },
    },
    [`${payeePath}/signed-documents`]: {
      get: {
        summary: "Documents the payee signed, each with a link that expires after 15 minutes",
        parameters: payeeParams,
        responses: {
          200: ok("Signed documents.", {
            type: "array",
            items: {
              type: "object",
              required: ["DocumentName", "SignedBy", "SignedOn", "DocumentLink"],
              properties: {
                DocumentName: { type: "string" },
                SignedBy: { type: "string" },
                SignedOn: seedTime,
                DocumentLink: { type: "string", format: "uri" },
              },
            },
          }),
          404: notFound,
          ...errors,
        },
      },
    },
    "/api/documents": {
      post: {
        summary: "Upload a PDF (at most 10 MiB decoded; names unique per company)",
        description:
          "The PDF is parsed whole before it is kept, as signing will: a 400 naming pdf_base64 " +
          "when it does not start with %PDF-, cannot be read, is encrypted, or has no page.",
        parameters: [companyApiKey, idempotencyKey],
        requestBody: body(schemas.uploadDocument),
        responses: {
          201: ok("Stored.", {
            type: "object",
            required: ["document_uuid"],
            properties: { document_uuid: { type: "string" } },
          }),
          413: failure("PAYLOAD_TOO_LARGE: the PDF or the body is too large."),
          ...writeErrors,
        },
      },
    },
    "/api/documents/{document_uuid}": {
      get: {
        summary:
          "A document's record (doc_type_id 1 After Payee Authentication, 2 ACH Authorization, " +
          "3 Authorization Party Approval, 4 Custom)",
        parameters: [pathParam("document_uuid"), companyApiKey],
        responses: { 200: ok("The record.", { type: "object" }), 404: notFound, ...errors },
      },
    },
    "/api/documents/{document_uuid}/content": {
      get: {
        summary: "The uploaded PDF",
        parameters: [pathParam("document_uuid"), companyApiKey],
        responses: {
          200: { description: "The PDF.", content: { "application/pdf": {} } },
          404: notFound,
          ...errors,
        },
      },
    },
    "/api/simple-payments": {
      post: {
        summary: "Pay one recipient with a memo; they choose the method through their link",
        parameters: [companyApiKey, idempotencyKey],
        requestBody: body(schemas.simplePayment),
        responses: {
          200: ok("The same request again: the existing record.", ref("ApiSimplePayment")),
          201: ok("Created.", ref("ApiSimplePayment")),
          ...writeErrors,
        },
      },
    },
    "/api/simple-payments/{simple_payment_uuid}": {
      get: {
        summary: "Get a simple payment with its status and link state",
        parameters: [pathParam("simple_payment_uuid"), companyApiKey],
        responses: { 200: ok("The record.", ref("ApiSimplePayment")), 404: notFound, ...errors },
      },
    },
    ...webhookPaths({
      prefix: "/api",
      eventNames: apiEventNames,
      parameters: [companyApiKey],
      endpoint: webhookEndpoint,
      endpointList: {
        type: "object",
        required: ["object", "data", "has_more"],
        properties: {
          object: { const: "list" },
          data: { type: "array", items: webhookEndpoint },
          has_more: { type: "boolean" },
        },
      },
      notFound,
      errors,
      writeErrors,
    }),
  };
  // Every operation but authenticate takes the bearer token it returns.
  for (const operations of Object.values(paths) as Record<string, JsonObject>[]) {
    for (const operation of Object.values(operations)) operation.security ??= [{ apiToken: [] }];
  }
  return { components, paths };
}
