/** Pieces both surfaces' OpenAPI paths are built from, so the two halves of the document agree. */
export type JsonObject = Record<string, unknown>;

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: JsonObject) => ({ "application/json": { schema } });
export const ok = (description: string, schema: JsonObject) => ({
  description,
  content: json(schema),
});
export const pathParam = (name: string, description?: string) => ({
  name,
  in: "path",
  required: true,
  ...(description ? { description } : {}),
  schema: { type: "string" },
});
export const idempotencyKey = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: "Replays the first response for 24 hours; another body with the same key is 422.",
  schema: { type: "string", maxLength: 255 },
};

/** What both surfaces show of an endpoint's health: disabled by a 410 or by the circuit breaker. */
export const endpointHealthProperties = {
  status: {
    enum: ["enabled", "disabled"],
    description:
      "Disabled after a 410 Gone or 5 days of only failed attempts, until enabled again.",
  },
  disabled_at: { type: ["string", "null"], format: "date-time" },
  disabled_reason: { type: ["string", "null"], description: "Why it was disabled, in words." },
  failing_since: {
    type: ["string", "null"],
    format: "date-time",
    description:
      "Start of an unbroken run of failed attempts (null after any success). After 1 hour the " +
      "endpoint gets one attempt at a time, at most one per 5 minutes.",
  },
};

export interface WebhookPathOptions {
  /** `/v1` or `/api`: one route factory serves both, so one description does too. */
  readonly prefix: string;
  readonly eventNames: readonly string[];
  /** Parameters every operation takes (CompanyApiKey on /api). */
  readonly parameters: readonly JsonObject[];
  readonly endpoint: JsonObject;
  readonly endpointList: JsonObject;
  readonly notFound: JsonObject;
  readonly errors: JsonObject;
  readonly writeErrors: JsonObject;
}

/** The webhook endpoint routes of one surface. */
export function webhookPaths(o: WebhookPathOptions) {
  const id = [pathParam("id", "we_…"), ...o.parameters];
  return {
    [`${o.prefix}/webhooks`]: {
      post: {
        summary: "Register a webhook endpoint; the signing secret is shown once",
        parameters: [...o.parameters, idempotencyKey],
        requestBody: {
          required: true,
          content: json({
            type: "object",
            required: ["url"],
            properties: {
              url: {
                type: "string",
                format: "uri",
                description: "https in live; http://localhost is allowed in test",
              },
              events: { type: "array", items: { enum: o.eventNames }, description: "Default: all" },
              description: { type: ["string", "null"] },
            },
          }),
        },
        responses: { 201: ok("Registered.", o.endpoint), ...o.writeErrors },
      },
      get: {
        summary: "The webhook endpoints",
        parameters: o.parameters,
        responses: { 200: ok("Endpoints.", o.endpointList), ...o.errors },
      },
    },
    [`${o.prefix}/webhooks/{id}`]: {
      get: {
        summary: "Retrieve an endpoint (without its secret)",
        parameters: id,
        responses: { 200: ok("The endpoint.", o.endpoint), 404: o.notFound, ...o.errors },
      },
      delete: {
        summary: "Delete an endpoint",
        parameters: id,
        responses: {
          200: ok("Deleted.", {
            type: "object",
            properties: {
              id: { type: "string" },
              object: { const: "webhook_endpoint" },
              deleted: { const: true },
            },
          }),
          404: o.notFound,
          ...o.errors,
        },
      },
    },
    [`${o.prefix}/webhooks/{id}/rotate-secret`]: {
      post: {
        summary:
          "Replace the signing secret; the previous one keeps signing beside it for 24 hours",
        parameters: [...id, idempotencyKey],
        responses: {
          200: ok("The new secret, shown once.", { type: "object" }),
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
        responses: { 200: ok("The endpoint.", o.endpoint), 404: o.notFound, ...o.errors },
      },
    },
    [`${o.prefix}/webhooks/{id}/deliveries`]: {
      get: {
        summary: "The endpoint's deliveries, newest first",
        parameters: id,
        responses: { 200: ok("Deliveries.", { type: "object" }), 404: o.notFound, ...o.errors },
      },
    },
  };
}
