/** Pieces both surfaces' OpenAPI paths are built from, so the two halves of the document agree. */
import { toJsonSchema, toJsonSchemaDefs } from "@valibot/to-json-schema";
import type * as v from "valibot";
import { IDEMPOTENCY_KEY_PATTERN } from "../../lib/idempotency/rules.ts";
import type { Config } from "../../lib/platform/config.ts";
import type { ResponseSchemas } from "./responses.ts";

export type JsonObject = Record<string, unknown>;
export type SchemaName = keyof ResponseSchemas;

const componentRef = (name: string) => `#/components/schemas/${name}`;

/** A reference to a component schema (those of routes/openapi/responses.ts, the webhook bodies). */
export const ref = (name: string) => ({ $ref: componentRef(name) });
export const json = (schema: JsonObject) => ({ "application/json": { schema } });
export const ok = (description: string, name: SchemaName) => ({
  description,
  content: json(ref(name)),
});
export const pathParam = (name: string, description?: string) => ({
  name,
  in: "path",
  required: true,
  ...(description ? { description } : {}),
  schema: { type: "string", minLength: 1 },
});

/** The Idempotency-Key header as routes/idempotency.ts checks it. */
export const idempotencyKey = (config: Config) => ({
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Replays the first response byte for byte for 24 hours (Idempotent-Replayed: true); another " +
    "method, path or body with the same key is 422, the same key while the first still runs 409.",
  schema: {
    type: "string",
    minLength: 1,
    maxLength: config.limits.IDEMPOTENCY_KEY_LENGTH_MAX,
    pattern: IDEMPOTENCY_KEY_PATTERN.source,
  },
});

/**
 * JSON Schema of a request body from the valibot schema the route validates with. Numbers are
 * kept as their JSON source text (a custom schema): they are plain JSON numbers on the wire.
 */
export function bodySchema(schema: v.GenericSchema): JsonObject {
  const json = toJsonSchema(schema, {
    errorMode: "ignore",
    overrideSchema: (context) =>
      context.valibotSchema.type === "custom" ? { type: "number" } : undefined,
  }) as JsonObject;
  delete json.$schema;
  return json;
}

/** The paths with every operation under one tag (a surface), as the reference groups them. */
export function tagged<P extends Record<string, Record<string, JsonObject>>>(
  tag: string,
  paths: P,
): P {
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) operation.tags = [tag];
  }
  return paths;
}

/** Component schemas of every response, derived from their valibot schemas. */
export function responseComponents(schemas: ResponseSchemas): Record<string, JsonObject> {
  return toJsonSchemaDefs(schemas, {
    errorMode: "ignore",
    overrideRef: (context) => componentRef(context.referenceId),
  }) as unknown as Record<string, JsonObject>;
}

export interface WebhookPathOptions {
  /** `/v1` or `/api`: one route factory serves both, so one description does too. */
  readonly prefix: string;
  readonly eventNames: readonly string[];
  /** Parameters every operation takes (CompanyApiKey on /api). */
  readonly parameters: readonly JsonObject[];
  readonly idempotencyKey: JsonObject;
  readonly endpoint: SchemaName;
  readonly registered: SchemaName;
  readonly endpointList: SchemaName;
  readonly notFound: JsonObject;
  readonly readErrors: JsonObject;
  /** A POST without Idempotency-Key still reads its body: 408 and 413 apply. */
  readonly postErrors: JsonObject;
  readonly writeErrors: JsonObject;
}

/** The webhook endpoint routes of one surface. */
export function webhookPaths(o: WebhookPathOptions) {
  const id = [pathParam("id", "we_…"), ...o.parameters];
  return {
    [`${o.prefix}/webhooks`]: {
      post: {
        summary: "Register a webhook endpoint; the signing secret is shown once",
        parameters: [...o.parameters, o.idempotencyKey],
        requestBody: {
          required: true,
          content: json({
            type: "object",
            required: ["url"],
            properties: {
              url: {
                type: "string",
                format: "uri",
                maxLength: 2048,
                description:
                  "https in live; http://localhost is allowed in test. The host must not be (or resolve to) a loopback, private, link-local or other special-purpose address.",
              },
              events: {
                type: "array",
                items: { enum: o.eventNames },
                description: "Default: all; repeated events count once.",
              },
              description: { type: ["string", "null"] },
              ed25519_signatures: {
                type: "boolean",
                description:
                  "Default false. True: deliveries also carry the Standard Webhooks ed25519 signature (`v1a,`), which a receiver verifies with the public key and cannot forge.",
              },
            },
          }),
        },
        responses: { 201: ok("Registered.", o.registered), ...o.writeErrors },
      },
      get: {
        summary: "The webhook endpoints",
        parameters: o.parameters,
        responses: { 200: ok("Endpoints.", o.endpointList), ...o.readErrors },
      },
    },
    [`${o.prefix}/webhooks/keys/ed25519`]: {
      get: {
        summary:
          "The ed25519 public key `v1a,` webhook signatures verify with (one per environment)",
        parameters: o.parameters,
        responses: { 200: ok("The public key.", "WebhookPublicKey"), ...o.readErrors },
      },
    },
    [`${o.prefix}/webhooks/{id}`]: {
      get: {
        summary: "Retrieve an endpoint (without its secret)",
        parameters: id,
        responses: { 200: ok("The endpoint.", o.endpoint), 404: o.notFound, ...o.readErrors },
      },
      delete: {
        summary: "Delete an endpoint",
        parameters: id,
        responses: {
          200: ok("Deleted.", "WebhookEndpointDeleted"),
          404: o.notFound,
          ...o.readErrors,
        },
      },
    },
    [`${o.prefix}/webhooks/{id}/rotate-secret`]: {
      post: {
        summary:
          "Replace the signing secret; the previous one keeps signing beside it for 24 hours",
        parameters: [...id, o.idempotencyKey],
        responses: {
          200: ok("The new secret, shown once.", "WebhookEndpointSecret"),
          404: o.notFound,
          ...o.writeErrors,
        },
      },
    },
    [`${o.prefix}/webhooks/{id}/enable`]: {
      post: {
        summary:
          "Enable an endpoint again and clear failing_since; deliveries that failed stay failed (replay them)",
        parameters: id,
        responses: { 200: ok("The endpoint.", o.endpoint), 404: o.notFound, ...o.postErrors },
      },
    },
    [`${o.prefix}/webhooks/{id}/deliveries`]: {
      get: {
        summary: "The endpoint's 100 latest deliveries, newest first",
        parameters: id,
        responses: {
          200: ok("Deliveries.", "WebhookDeliveryList"),
          404: o.notFound,
          ...o.readErrors,
        },
      },
    },
  };
}
