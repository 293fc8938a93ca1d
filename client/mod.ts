/**
 * A typed client of both surfaces: openapi-fetch over the types that openapi-typescript generates
 * from the service's OpenAPI document (client/schema.d.ts, `deno task client`). Paths, path
 * parameters, bodies and responses are checked by `deno check`; every POST gets an
 * Idempotency-Key unless the caller sends one, so a retried call cannot pay twice.
 *
 *     const v1 = v1Client({ baseUrl, key: "sk_test_…" });
 *     const { data, error } = await v1.GET("/v1/disbursements/{id}", {
 *       params: { path: { id: "dsb_…" } },
 *     });
 */
import createClient, { type Client, type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema.d.ts";

export type { components, paths };
/** A response body of the document by its component name, e.g. `Schema<"Disbursement">`. */
export type Schema<Name extends keyof components["schemas"]> = components["schemas"][Name];
export type DisbursementClient = Client<paths>;

export {
  SIGNATURE_TOLERANCE_SECONDS,
  verifyEnvelopeSignature,
  verifySignature,
} from "../lib/webhooks/signing.ts";

/** Adds a fresh Idempotency-Key to every POST that has none. */
const idempotencyKeys: Middleware = {
  onRequest({ request }) {
    if (request.method === "POST" && !request.headers.has("Idempotency-Key")) {
      request.headers.set("Idempotency-Key", crypto.randomUUID());
    }
    return request;
  },
};

export interface ClientOptions {
  /** The service's origin, e.g. http://127.0.0.1:8000. */
  readonly baseUrl: string;
  /** A fetch of your own (a proxy, a test double); the global one by default. */
  readonly fetch?: typeof fetch;
}

/** A Surface B client with a business-line key (`sk_test_…` or `sk_live_…`). */
export function v1Client(options: ClientOptions & { key: string }): DisbursementClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    fetch: options.fetch,
    headers: { Authorization: `Bearer ${options.key}` },
  });
  client.use(idempotencyKeys);
  return client;
}

/**
 * A Surface A client: authenticates with the company TIN and a user API key (and the company's
 * key, for a user of several companies) and sends the token it gets. The token lasts an hour.
 */
export async function apiClient(
  options: ClientOptions & { tin: string; userKey: string; companyKey?: string },
): Promise<DisbursementClient> {
  const companyHeader = options.companyKey ? { CompanyApiKey: options.companyKey } : undefined;
  const login = createClient<paths>({ baseUrl: options.baseUrl, fetch: options.fetch });
  const { data, error } = await login.POST("/api/authenticate", {
    params: { header: companyHeader },
    headers: { Authorization: `Basic ${btoa(`${options.tin}:${options.userKey}`)}` },
  });
  if (!data) throw new Error(`authentication failed: ${error?.name}: ${error?.message}`);
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    fetch: options.fetch,
    headers: { Authorization: `Bearer ${data.access_token}`, ...companyHeader },
  });
  client.use(idempotencyKeys);
  return client;
}
