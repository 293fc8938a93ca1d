/**
 * The OpenAPI 3.1 document of Surface B, served at /openapi.json. Request bodies come from the
 * same valibot schemas the routes validate with, so the document cannot drift from the checks.
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import type { Config } from "../../lib/platform/config.ts";
import { apiOpenApi } from "./api.ts";
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
import { v1Schemas } from "../v1/schemas.ts";
import { webhookDeliveries, webhookPayloadSchemas } from "./webhook_payloads.ts";
import { v1EventTypes } from "../v1/webhooks.ts";

/** JSON Schema of a request body; numbers kept as source text are plain JSON numbers on the wire. */
function bodySchema(schema: v.GenericSchema): JsonObject {
  const json = toJsonSchema(schema, {
    errorMode: "ignore",
    overrideSchema: (
      context,
    ) => (context.valibotSchema.type === "custom" ? { type: "number" } : undefined),
  }) as JsonObject;
  delete json.$schema;
  return json;
}

const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: ref("Problem") } },
});
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
    schema: { type: "string" },
  },
];
const errors = {
  400: problem("A field is not valid: `errors[]` names each."),
  401: problem("The key is missing, unknown, rotated past its grace period, or revoked."),
  429: problem("More than the credential's requests per second: see Retry-After."),
};
const writeErrors = {
  ...errors,
  408: problem(
    "The body did not arrive whole within BODY_TIMEOUT_MS (30 s by default): nothing was done.",
  ),
  409: problem("Refused by a business rule, or the same Idempotency-Key is still in progress."),
  422: problem("The Idempotency-Key was used with another request."),
};
const listOf = (item: string) => ({
  type: "object",
  required: ["object", "data", "has_more"],
  properties: {
    object: { const: "list" },
    data: { type: "array", items: ref(item) },
    has_more: { type: "boolean" },
  },
});
const dollars = { type: "number", description: "US dollars, at most two decimals." };
const timestamp = { type: "string", format: "date-time" };

/** The /v1 document for this configuration (its limits and base URL). */
export function openApiDocument(config: Config): JsonObject {
  const schemas = v1Schemas(config);
  const surfaceA = apiOpenApi(config, bodySchema);
  const modalities = ["ach", "check", "vcc", "instant_deposit", "digital_check", "venmo", "paypal"];
  return {
    openapi: "3.1.0",
    info: {
      title: "Disbursement service — Surface A (/api) and Surface B (/v1)",
      version: "1.0.0",
      description:
        "Pay payees who pick how to be paid. Amounts are dollars with at most two decimals. Every POST " +
        "accepts Idempotency-Key. /v1 errors are RFC 9457 problem details; /api errors are the record " +
        "{name, message, details[{Issue, Field, Location}]}. Free text on both surfaces (names, addresses, " +
        "memos, descriptions, claim and other caller ids, party fields, metadata keys and values) must not " +
        "hold control characters (tab aside), bidirectional overrides (U+202A–U+202E, U+2066–U+2069) or " +
        "lone surrogates: a 400 names the field. Metadata keys __proto__, constructor and prototype are " +
        "refused by name.",
    },
    servers: [{ url: config.baseUrl }],
    security: [{ lineKey: [] }],
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
        ...surfaceA.components,
        ...webhookPayloadSchemas,
        Problem: {
          type: "object",
          required: ["type", "title", "status", "detail", "code"],
          properties: {
            type: { type: "string" },
            title: { type: "string" },
            status: { type: "integer" },
            detail: { type: "string" },
            code: { type: "string" },
            errors: {
              type: "array",
              items: {
                type: "object",
                required: ["param", "message"],
                properties: { param: { type: "string" }, message: { type: "string" } },
              },
            },
          },
        },
        Disbursement: {
          type: "object",
          required: [
            "id",
            "object",
            "status",
            "amount",
            "currency",
            "claim_id",
            "payee",
            "modalities",
            "modality",
            "metadata",
            "line",
            "livemode",
            "created",
            "payee_url",
            "timeline",
          ],
          properties: {
            id: {
              type: "string",
              description:
                "dsb_… for a disbursement created through /v1; po_… for a payout made through /api on the key's line (a disbursement's payee or a Simple Payment), the id its /v1 events carry.",
            },
            object: { const: "disbursement" },
            status: {
              enum: [
                "created",
                "modality_offered",
                "modality_selected",
                "funds_sent",
                "completed",
                "failed",
                "canceled",
              ],
            },
            amount: dollars,
            currency: { const: "USD" },
            claim_id: {
              type: "string",
              description:
                "For a payout made through /api: its disbursement_uuid or simple_payment_uuid.",
            },
            payee: {
              type: ["object", "null"],
              description: "null for a payout made through /api: its payee is no /v1 payee.",
              properties: { id: { type: "string" } },
            },
            modalities: { type: "array", items: { enum: modalities } },
            modality: { enum: [...modalities, null] },
            metadata: { type: "object", additionalProperties: { type: "string" } },
            line: { type: "string" },
            livemode: { type: "boolean" },
            created: timestamp,
            payee_url: {
              type: ["string", "null"],
              format: "uri",
              description: "null for a payout made through /api (its payee is told through /api).",
            },
            timeline: {
              type: "array",
              items: {
                type: "object",
                required: ["status", "at"],
                properties: {
                  status: { type: "string" },
                  at: timestamp,
                  detail: { type: "string" },
                },
              },
            },
          },
        },
        Payee: {
          type: "object",
          required: [
            "id",
            "object",
            "language",
            "contact_channel",
            "modality_defaults",
            "line",
            "livemode",
            "created",
            "updated",
          ],
          properties: {
            id: { type: "string" },
            object: { const: "payee" },
            name: { type: ["string", "null"] },
            email: { type: ["string", "null"] },
            phone: { type: ["string", "null"] },
            language: { enum: ["en", "es"] },
            contact_channel: { enum: ["email", "sms"] },
            modality_defaults: { type: "array", items: { enum: modalities } },
            address: { type: ["object", "null"] },
            line: { type: "string" },
            livemode: { type: "boolean" },
            created: timestamp,
            updated: timestamp,
          },
        },
        Balance: {
          type: "object",
          properties: {
            object: { const: "balance" },
            line: { type: "string" },
            available: dollars,
            pending: dollars,
            reserved: dollars,
            in_transit: dollars,
            currency: { const: "USD" },
            livemode: { type: "boolean" },
            as_of: timestamp,
          },
        },
        TieOut: {
          type: "object",
          description:
            "A UTC day of the line, in US dollars (`currency`): difference = opening + funded − returned_funding + returned − disbursed − fees − closing.",
          properties: {
            object: { const: "tieout" },
            line: { type: "string" },
            livemode: { type: "boolean" },
            date: { type: "string", format: "date" },
            currency: { const: "USD" },
            opening: dollars,
            funded: dollars,
            returned_funding: { ...dollars, description: "ACH fundings the bank returned." },
            returned: {
              ...dollars,
              description:
                "Money of completed payouts that came back (late ACH returns, refunds), back in available.",
            },
            disbursed: dollars,
            fees: dollars,
            closing: dollars,
            difference: { ...dollars, description: "Always 0 for a sound ledger." },
          },
        },
        Event: {
          type: "object",
          description:
            "The envelope a /v1 webhook body of this event carries (`id`, `type`, `created`, `data`, the same JSON), with `object` and `signature`.",
          required: ["id", "object", "type", "created", "data", "signature"],
          properties: {
            id: { type: "string" },
            object: { const: "event" },
            type: { enum: v1EventTypes },
            created: timestamp,
            data: { type: "object", description: "Exactly the webhook body's `data`." },
            signature: {
              type: ["string", "null"],
              description:
                "The X-Signature sent with the latest delivery attempt to a /v1 endpoint (`v1=t=<unix>,sha256=<hex>`; each attempt is signed afresh), or null before any attempt.",
            },
          },
        },
        WebhookEndpoint: {
          type: "object",
          properties: {
            id: { type: "string" },
            object: { const: "webhook_endpoint" },
            url: { type: "string", format: "uri" },
            events: { type: "array", items: { enum: v1EventTypes } },
            description: { type: ["string", "null"] },
            ...endpointHealthProperties,
            line: { type: "string" },
            livemode: { type: "boolean" },
            created: timestamp,
            secret: { type: "string", description: "whsec_…, in the creation response only." },
          },
        },
      },
    },
    paths: {
      ...surfaceA.paths,
      "/v1/disbursements": {
        post: {
          summary: "Create a disbursement (one payee, one claim)",
          parameters: [idempotencyKey],
          requestBody: { required: true, content: json(bodySchema(schemas.createDisbursement)) },
          responses: {
            201: ok("Created; the amount is held.", ref("Disbursement")),
            ...writeErrors,
          },
        },
        get: {
          summary: "List disbursements of the key's line, newest first",
          parameters: listParams,
          responses: { 200: ok("A page.", listOf("Disbursement")), ...errors },
        },
      },
      "/v1/disbursements/{id}": {
        get: {
          summary: "Retrieve a disbursement, or a payout made through /api on the key's line",
          parameters: [pathParam("id", "dsb_…, or po_… as a /v1 event carries it")],
          responses: {
            200: ok("The disbursement.", ref("Disbursement")),
            404: problem("No such disbursement for this key."),
            ...errors,
          },
        },
      },
      "/v1/disbursements/{id}/cancel": {
        post: {
          summary:
            "Cancel before a modality is selected, or after a failure; the money returns to available",
          parameters: [pathParam("id", "dsb_…"), idempotencyKey],
          responses: {
            200: ok("Canceled.", ref("Disbursement")),
            404: problem("No such disbursement."),
            ...writeErrors,
          },
        },
      },
      "/v1/payees": {
        post: {
          summary: "Create or update a payee by your id (fields left out keep their value)",
          parameters: [idempotencyKey],
          requestBody: { required: true, content: json(bodySchema(schemas.upsertPayee)) },
          responses: {
            200: ok("Updated.", ref("Payee")),
            201: ok("Created.", ref("Payee")),
            ...writeErrors,
          },
        },
      },
      "/v1/payees/{id}": {
        get: {
          summary: "Retrieve a payee",
          parameters: [pathParam("id", "Your payee id")],
          responses: {
            200: ok("The payee.", ref("Payee")),
            404: problem("No such payee."),
            ...errors,
          },
        },
      },
      "/v1/ledgers/{line}/balance": {
        get: {
          summary: "The segregated balance of the key's line",
          parameters: [pathParam("line", "The line code, e.g. auto")],
          responses: {
            200: ok("The balance.", ref("Balance")),
            404: problem("Another line."),
            ...errors,
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
            200: ok("The tie-out.", ref("TieOut")),
            404: problem("Another line."),
            ...errors,
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
          responses: { 200: ok("A page.", listOf("Event")), ...errors },
        },
      },
      "/v1/events/{id}": {
        get: {
          summary: "Retrieve an event",
          parameters: [pathParam("id", "evt_…")],
          responses: {
            200: ok("The event.", ref("Event")),
            404: problem("No such event."),
            ...errors,
          },
        },
      },
      "/v1/events/{id}/replay": {
        post: {
          summary: "Deliver an event again to every subscribed endpoint",
          parameters: [pathParam("id", "evt_…"), idempotencyKey],
          responses: {
            202: ok("Deliveries queued.", {
              type: "object",
              properties: {
                object: { const: "event_replay" },
                event_id: { type: "string" },
                deliveries: { type: "integer" },
              },
            }),
            404: problem("No such event."),
            ...writeErrors,
          },
        },
      },
      ...webhookPaths({
        prefix: "/v1",
        eventNames: v1EventTypes,
        parameters: [],
        endpoint: ref("WebhookEndpoint"),
        endpointList: listOf("WebhookEndpoint"),
        notFound: problem("No such endpoint."),
        errors,
        writeErrors,
      }),
      "/v1/keys/rotate": {
        post: {
          summary: "Replace the calling key; the old key works for 24 more hours",
          parameters: [idempotencyKey],
          responses: { 201: ok("The new key, shown once.", { type: "object" }), ...writeErrors },
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
            200: ok("The new sandbox time.", { type: "object" }),
            403: problem("A live key."),
            ...errors,
          },
        },
      },
    },
    webhooks: webhookDeliveries,
  };
}
