/**
 * The OpenAPI 3.1 document of both surfaces, served at /openapi.json. Request bodies come from the
 * valibot schemas the routes validate with, and response bodies from the valibot schemas of
 * routes/openapi/responses.ts that type the views, so the document cannot drift from either.
 */
import type { Config } from "../../lib/platform/config.ts";
import { apiOpenApi } from "./api.ts";
import {
  bodySchema,
  idempotencyKey,
  json,
  type JsonObject,
  ok,
  pathParam,
  ref,
  responseComponents,
  tagged,
  webhookPaths,
} from "./parts.ts";
import { responseSchemas } from "./responses.ts";
import { v1Schemas } from "../v1/schemas.ts";
import { webhookDeliveries, webhookPayloadSchemas } from "./webhook_payloads.ts";
import { v1EventTypes } from "../v1/webhooks.ts";

const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: ref("Problem") } },
});
/** What any /v1 request may be answered besides its own outcomes. */
const readErrors = {
  401: problem(
    "authentication_failed: the key is missing, unknown, rotated past its grace period, or revoked.",
  ),
  429: problem("rate_limited: more than the credential's requests per second: see Retry-After."),
  500: problem("internal_error: quote the X-Request-Id when reporting it."),
};
/** A POST reads a body: it may be too large or too slow, whether or not the route wants one. */
const postErrors = {
  ...readErrors,
  408: problem(
    "request_timeout: the body did not arrive whole within BODY_TIMEOUT_MS (30 s by default): nothing was done.",
  ),
  413: problem("payload_too_large: the body exceeds BODY_LIMIT_BYTES (1 MiB by default)."),
  415: problem(
    "unsupported_media_type: a body was sent without `Content-Type: application/json` (charset=utf-8 is the only parameter allowed): nothing was done.",
  ),
};
const writeErrors = {
  ...postErrors,
  400: problem("validation_error (or another 400 code): `errors[]` names each wrong field."),
  409: problem(
    "Refused by a business rule (`code` names it), or idempotency_request_in_progress: the same Idempotency-Key is still running.",
  ),
  422: problem("idempotency_key_reused: the Idempotency-Key was used with another request."),
};
const listErrors = {
  ...readErrors,
  400: problem("validation_error: limit or starting_after is not valid, or names no object."),
};

/** The /v1 document for this configuration (its limits and base URL). */
export function openApiDocument(config: Config): JsonObject {
  const schemas = v1Schemas(config);
  const surfaceA = apiOpenApi(config);
  const idempotency = idempotencyKey(config);
  const listParams = [
    {
      name: "limit",
      in: "query",
      schema: { type: "integer", minimum: 1, maximum: 100, default: 10 },
    },
    {
      name: "starting_after",
      in: "query",
      description: "The id of the last object of the previous page.",
      schema: bodySchema(schemas.listQuery.entries.starting_after),
    },
  ];
  return {
    openapi: "3.1.0",
    info: {
      title: "Disbursement service — Surface A (/api) and Surface B (/v1)",
      version: "1.0.0",
      description:
        "Pay payees who pick how to be paid. The rules cited as contract §n (states and their ids, " +
        "events, fees, limits, signatures) are in /docs/contract.md. Amounts are dollars with at " +
        "most two decimals. Every POST " +
        "accepts Idempotency-Key. /v1 errors are RFC 9457 problem details whose `type` links to " +
        "/docs/errors; /api errors are the record {name, message, details[{Issue, Field, Location}]}. " +
        "A known path asked with another method is a 405 with an Allow header. Free text on both " +
        "surfaces (names, addresses, memos, descriptions, claim and other caller ids, party fields, " +
        "metadata keys and values) must not hold control characters (tab aside), bidirectional " +
        "overrides (U+202A–U+202E, U+2066–U+2069) or lone surrogates: a 400 names the field. Metadata " +
        "keys `__proto__`, `constructor` and `prototype` are refused by name.",
    },
    servers: [{ url: config.baseUrl }],
    security: [{ lineKey: [] }],
    tags: [
      {
        name: "Surface A (/api)",
        description: "The company API of the seed: JWT from /api/authenticate.",
      },
      {
        name: "Surface B (/v1)",
        description: "The business-line API: `Authorization: Bearer sk_…`.",
      },
    ],
    components: {
      securitySchemes: {
        lineKey: {
          type: "http",
          scheme: "bearer",
          description: "A business-line key: sk_test_… or sk_live_…",
        },
        apiToken: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "Surface A: the access_token of POST /api/authenticate.",
        },
        basic: {
          type: "http",
          scheme: "basic",
          description: "Surface A authentication: the company TIN and a user API key.",
        },
      },
      schemas: {
        ...responseComponents(responseSchemas(config)),
        ...webhookPayloadSchemas,
      },
    },
    paths: {
      ...surfaceA.paths,
      ...tagged("Surface B (/v1)", {
        "/v1/disbursements": {
          post: {
            summary: "Create a disbursement (one payee, one claim); the amount is held at once",
            parameters: [idempotency],
            requestBody: { required: true, content: json(bodySchema(schemas.createDisbursement)) },
            responses: {
              201: ok("Created; the amount is held.", "Disbursement"),
              ...writeErrors,
              400: problem(
                "validation_error: `errors[]` names each wrong field (modalities when neither the request nor the payee's modality_defaults name one); payee_not_found: no payee with payee.id on this line; amount_below_payee_fee: the amount does not cover an offered method's payee fee; rail_not_configured: in live none of the modalities can be paid (live pays ach once the company's bank settings are stored).",
              ),
              409: problem(
                "insufficient_funds: available does not cover the amount and the highest fee among the modalities (the message names the shortfall); sanctions_list_missing: live, and no OFAC list is loaded to screen the payee; idempotency_request_in_progress.",
              ),
            },
          },
          get: {
            summary: "List disbursements of the key's line, newest first",
            parameters: listParams,
            responses: { 200: ok("A page.", "DisbursementList"), ...listErrors },
          },
        },
        "/v1/disbursements/{id}": {
          get: {
            summary: "Retrieve a disbursement, or a payout made through /api on the key's line",
            parameters: [pathParam("id", "dsb_…, or po_… as a /v1 event carries it")],
            responses: {
              200: ok("The disbursement.", "Disbursement"),
              404: problem("not_found: no such disbursement for this key."),
              ...readErrors,
            },
          },
        },
        "/v1/disbursements/{id}/cancel": {
          post: {
            summary:
              "Cancel before a modality is selected, or after a failure; the money returns to available",
            parameters: [pathParam("id", "dsb_…"), idempotency],
            responses: {
              200: ok("Canceled.", "Disbursement"),
              404: problem("not_found: no such disbursement."),
              ...writeErrors,
              409: problem(
                "not_cancelable: a modality was selected, the funds were sent, or the payout ended; payout_in_flight: a failed payout's retry is in a built bank file or later (an entry only queued is removed with the cancel), or with a provider paid per payout that has not answered yet; idempotency_request_in_progress.",
              ),
            },
          },
        },
        "/v1/payees": {
          post: {
            summary: "Create or update a payee by your id (fields left out keep their value)",
            description:
              "The payee must stay reachable on its contact_channel: an e-mail for email, a phone for sms (400 contact_missing naming the field).",
            parameters: [idempotency],
            requestBody: { required: true, content: json(bodySchema(schemas.upsertPayee)) },
            responses: {
              200: ok("Updated (or unchanged).", "Payee"),
              201: ok("Created.", "Payee"),
              ...writeErrors,
            },
          },
        },
        "/v1/payees/{id}": {
          get: {
            summary: "Retrieve a payee",
            parameters: [pathParam("id", "Your payee id")],
            responses: {
              200: ok("The payee.", "Payee"),
              404: problem("not_found: no such payee on this line."),
              ...readErrors,
            },
          },
        },
        "/v1/ledgers/{line}/balance": {
          get: {
            summary: "The segregated balance of the key's line",
            parameters: [pathParam("line", "The line code, e.g. auto")],
            responses: {
              200: ok("The balance.", "Balance"),
              404: problem("not_found: another line than the key's."),
              ...readErrors,
            },
          },
        },
        "/v1/ledgers/{line}/tieouts/{date}": {
          get: {
            summary: "The line's tie-out for a UTC day",
            parameters: [pathParam("line", "The line code"), {
              ...pathParam("date", "YYYY-MM-DD"),
              schema: { type: "string", format: "date" },
            }],
            responses: {
              200: ok("The tie-out.", "TieOut"),
              400: problem("validation_error: date is not a calendar date YYYY-MM-DD."),
              404: problem("not_found: another line than the key's."),
              ...readErrors,
            },
          },
        },
        "/v1/events": {
          get: {
            summary: "The line's events, newest first",
            parameters: [...listParams, {
              name: "type",
              in: "query",
              schema: { enum: v1EventTypes },
            }],
            responses: { 200: ok("A page.", "EventList"), ...listErrors },
          },
        },
        "/v1/events/{id}": {
          get: {
            summary: "Retrieve an event",
            parameters: [pathParam("id", "evt_…")],
            responses: {
              200: ok("The event.", "Event"),
              404: problem("not_found: no such event on this line."),
              ...readErrors,
            },
          },
        },
        "/v1/events/{id}/replay": {
          post: {
            summary: "Deliver an event again to every subscribed endpoint",
            parameters: [pathParam("id", "evt_…"), idempotency],
            responses: {
              202: ok("Deliveries queued.", "EventReplay"),
              404: problem("not_found: no such event on this line."),
              ...writeErrors,
            },
          },
        },
        ...webhookPaths({
          prefix: "/v1",
          eventNames: v1EventTypes,
          parameters: [],
          idempotencyKey: idempotency,
          endpoint: "WebhookEndpoint",
          registered: "WebhookEndpointRegistered",
          endpointList: "WebhookEndpointList",
          notFound: problem("not_found: no such endpoint on this line."),
          readErrors,
          postErrors,
          writeErrors,
        }),
        "/v1/keys/rotate": {
          post: {
            summary: "Replace the calling key; the old key works for 24 more hours",
            parameters: [idempotency],
            responses: {
              201: ok("The new key, shown once.", "ApiKey"),
              ...writeErrors,
              409: problem(
                "key_already_rotated, key_not_active or key_not_found: the calling key cannot be rotated again; idempotency_request_in_progress.",
              ),
            },
          },
        },
        "/v1/sandbox/clock": {
          get: {
            summary:
              "The company's sandbox time (test keys only); it moves only forward, there is no reset",
            responses: {
              200: ok("The sandbox time.", "SandboxClockReading"),
              403: problem("live_mode_forbidden: a live key."),
              ...readErrors,
            },
          },
        },
        "/v1/sandbox/clock/advance": {
          post: {
            summary: "Move the company's sandbox clock and run what falls due (test keys only)",
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
              400: problem("validation_error: seconds is not a whole number of 1 to 31,536,000."),
              403: problem("live_mode_forbidden: a live key."),
              ...postErrors,
            },
          },
        },
      }),
    },
    webhooks: webhookDeliveries,
  };
}
