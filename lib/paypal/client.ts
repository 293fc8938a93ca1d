/**
 * PayPal's REST API as the Payouts rail uses it (fetch with typed shapes; PayPal's server SDK is
 * not used): an OAuth 2 client-credentials token cached until shortly before it expires, create a
 * payout batch, read a batch and an item, cancel an unclaimed item, and verify a webhook's
 * signature. A call PayPal did not answer (the network failed, a 5xx, the timeout) throws
 * TransientJobError: the job that made it runs again later, and a batch is sent again under the
 * same sender_batch_id, which PayPal never pays twice.
 */
import { TransientJobError } from "../../db/scheduler.ts";
import type { PaypalSettings } from "./settings.ts";
import { untilDurable } from "../platform/durability.ts";

/** How long one call may take before it counts as unanswered. */
export const PAYPAL_CALL_TIMEOUT_MS = 30_000;
/** A cached token is renewed this long before PayPal says it expires. */
export const TOKEN_RENEW_BEFORE_MS = 60_000;

/** PayPal's error body (developer.paypal.com, "REST API responses"). */
export interface PaypalError {
  readonly name: string;
  readonly message: string;
  readonly debug_id?: string;
  readonly information_link?: string;
  readonly details?: readonly { field?: string; location?: string; issue?: string }[];
  readonly links?: readonly { href: string; rel: string; method?: string }[];
}

/** What a payout item says of itself (GET /v1/payments/payouts-item/{id}, and each item of a batch). */
export interface PayoutItemAnswer {
  readonly payout_item_id: string;
  readonly transaction_status: string;
  readonly payout_batch_id: string;
  readonly payout_item: {
    readonly sender_item_id: string;
    readonly recipient_wallet?: string;
    readonly receiver: string;
    readonly amount: { readonly currency: string; readonly value: string };
  };
  /** PayPal's error of a failed, returned or unclaimed item (RECEIVER_UNREGISTERED, …). */
  readonly errors?: { readonly name: string; readonly message?: string };
}

/** GET /v1/payments/payouts/{payout_batch_id}. */
export interface PayoutBatchAnswer {
  readonly batch_header: {
    readonly payout_batch_id: string;
    readonly batch_status: string;
    readonly sender_batch_header: { readonly sender_batch_id: string };
  };
  readonly items: readonly PayoutItemAnswer[];
}

/** One item of a batch to create. */
export interface PayoutItemRequest {
  readonly recipient_type: "EMAIL" | "PHONE";
  readonly recipient_wallet: "PAYPAL" | "VENMO";
  readonly receiver: string;
  readonly amount: { readonly currency: "USD"; readonly value: string };
  readonly sender_item_id: string;
  readonly note: string;
}

/** What creating a batch came to. */
export type CreateBatchAnswer =
  | { readonly kind: "created"; readonly payoutBatchId: string }
  /** PayPal already has this sender_batch_id: the batch it made of it the first time. */
  | { readonly kind: "duplicate"; readonly payoutBatchId: string }
  | { readonly kind: "refused"; readonly status: number; readonly error: PaypalError };

/** What cancelling an item came to. */
export type CancelItemAnswer =
  | { readonly kind: "canceled"; readonly item: PayoutItemAnswer }
  | { readonly kind: "refused"; readonly status: number; readonly error: PaypalError };

/** The headers PayPal signs a webhook with, as verify-webhook-signature takes them. */
export interface WebhookHeaders {
  readonly authAlgo: string | null;
  readonly certUrl: string | null;
  readonly transmissionId: string | null;
  readonly transmissionSig: string | null;
  readonly transmissionTime: string | null;
}

interface CachedToken {
  readonly accessToken: string;
  readonly renewAt: number;
}

/**
 * Where a company's PayPal calls go: its settings, and the fetch that carries them (the network's,
 * or the sandbox's PayPal simulator answering in process).
 */
export interface PaypalConnection {
  readonly settings: PaypalSettings;
  readonly fetch: typeof fetch;
}

/** PayPal's REST API under one company's settings; tokens are shared by every client of one app. */
export class PaypalClient {
  static readonly #tokens = new Map<string, CachedToken>();
  private readonly settings: PaypalSettings;

  constructor(
    private readonly connection: PaypalConnection,
    private readonly timeoutMs: number = PAYPAL_CALL_TIMEOUT_MS,
  ) {
    this.settings = connection.settings;
  }

  /** POST /v1/payments/payouts, asynchronous: PayPal answers 201 with the batch header. */
  async createBatch(
    senderBatchId: string,
    items: readonly PayoutItemRequest[],
  ): Promise<CreateBatchAnswer> {
    const response = await this.#call("POST", "/v1/payments/payouts", {
      sender_batch_header: {
        sender_batch_id: senderBatchId,
        email_subject: "You have a payment",
        email_message: "You received a claim payment.",
      },
      items,
    });
    const body = await response.json();
    if (response.status === 201 || response.status === 200) {
      return { kind: "created", payoutBatchId: String(body.batch_header.payout_batch_id) };
    }
    const error = body as PaypalError;
    const original = duplicateBatchOf(error);
    if (original !== null) return { kind: "duplicate", payoutBatchId: original };
    return { kind: "refused", status: response.status, error };
  }

  /** GET /v1/payments/payouts/{payout_batch_id}: the batch and each of its items. */
  async getBatch(payoutBatchId: string): Promise<PayoutBatchAnswer> {
    const response = await this.#call(
      "GET",
      `/v1/payments/payouts/${encodeURIComponent(payoutBatchId)}`,
    );
    return await this.#expect<PayoutBatchAnswer>(response, `batch ${payoutBatchId}`);
  }

  /** GET /v1/payments/payouts-item/{payout_item_id}. */
  async getItem(payoutItemId: string): Promise<PayoutItemAnswer> {
    const response = await this.#call(
      "GET",
      `/v1/payments/payouts-item/${encodeURIComponent(payoutItemId)}`,
    );
    return await this.#expect<PayoutItemAnswer>(response, `item ${payoutItemId}`);
  }

  /** POST /v1/payments/payouts-item/{id}/cancel: allowed while the item is unclaimed. */
  async cancelItem(payoutItemId: string): Promise<CancelItemAnswer> {
    const response = await this.#call(
      "POST",
      `/v1/payments/payouts-item/${encodeURIComponent(payoutItemId)}/cancel`,
    );
    const body = await response.json();
    if (response.ok) return { kind: "canceled", item: body as PayoutItemAnswer };
    return { kind: "refused", status: response.status, error: body as PaypalError };
  }

  /** POST /v1/notifications/verify-webhook-signature with this app's webhook id. */
  async verifyWebhook(headers: WebhookHeaders, event: unknown): Promise<boolean> {
    if (Object.values(headers).some((value) => value === null)) return false;
    const response = await this.#call("POST", "/v1/notifications/verify-webhook-signature", {
      auth_algo: headers.authAlgo,
      cert_url: headers.certUrl,
      transmission_id: headers.transmissionId,
      transmission_sig: headers.transmissionSig,
      transmission_time: headers.transmissionTime,
      webhook_id: this.settings.webhookId,
      webhook_event: event,
    });
    const body = await this.#expect<{ verification_status: string }>(response, "verification");
    return body.verification_status === "SUCCESS";
  }

  /** An answer PayPal must give with a 2xx; any other is an error the caller cannot act on. */
  async #expect<T>(response: Response, what: string): Promise<T> {
    const body = await response.json();
    if (response.ok) return body as T;
    const error = body as PaypalError;
    throw new Error(
      `PayPal refused to give ${what}: ${response.status} ${error.name} (${error.message}, debug_id ${error.debug_id})`,
    );
  }

  async #call(method: string, path: string, body?: unknown): Promise<Response> {
    let token = await this.#token();
    let response = await this.#fetch(method, path, token, body);
    if (response.status === 401) {
      // A token PayPal revoked before its time: one more try with a new one.
      await response.body?.cancel();
      PaypalClient.#tokens.delete(this.#tokenKey());
      token = await this.#token();
      response = await this.#fetch(method, path, token, body);
    }
    return response;
  }

  #tokenKey(): string {
    return `${this.settings.baseUrl} ${this.settings.clientId}`;
  }

  /** POST /v1/oauth2/token (client credentials), or the cached token while it is good. */
  async #token(): Promise<string> {
    const cached = PaypalClient.#tokens.get(this.#tokenKey());
    if (cached && Date.now() < cached.renewAt) return cached.accessToken;
    const basic = btoa(`${this.settings.clientId}:${this.settings.clientSecret}`);
    const response = await this.#send(`${this.settings.baseUrl}/v1/oauth2/token`, {
      method: "POST",
      headers: {
        Authorization: `Basic ${basic}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=client_credentials",
    });
    const body = await response.json();
    if (!response.ok) {
      throw new Error(
        `PayPal refused the client credentials of ${this.settings.baseUrl}: ${response.status} ${
          body.error ?? body.name
        } (${body.error_description ?? body.message})`,
      );
    }
    const expiresInMs = Number(body.expires_in) * 1000;
    PaypalClient.#tokens.set(this.#tokenKey(), {
      accessToken: String(body.access_token),
      renewAt: Date.now() + Math.max(0, expiresInMs - TOKEN_RENEW_BEFORE_MS),
    });
    return String(body.access_token);
  }

  #fetch(method: string, path: string, token: string, body?: unknown): Promise<Response> {
    return this.#send(`${this.settings.baseUrl}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        "Content-Type": "application/json",
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  /** One request; no answer, or a 5xx, is transient (PayPal: "you can safely retry"). */
  async #send(url: string, init: RequestInit): Promise<Response> {
    await untilDurable();
    let response: Response;
    try {
      response = await this.connection.fetch(url, {
        ...init,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new TransientJobError(
        `PayPal did not answer ${init.method} ${new URL(url).pathname}: ${
          error instanceof Error ? error.message : String(error)
        }`,
        { cause: error },
      );
    }
    if (response.status >= 500) {
      const text = await response.text();
      throw new TransientJobError(
        `PayPal answered ${init.method} ${new URL(url).pathname} with ${response.status}: ${
          text.slice(0, 300)
        }`,
      );
    }
    return response;
  }
}

/**
 * PayPal's refusal of a sender_batch_id it already has (USER_BUSINESS_ERROR naming
 * SENDER_BATCH_ID), with a link to the original batch: that batch's id, else null.
 */
export function duplicateBatchOf(error: PaypalError): string | null {
  const names = [error.name, ...(error.details ?? []).map((d) => d.field ?? "")];
  const aboutBatchId = names.some((name) => /SENDER_BATCH_ID/i.test(name)) ||
    error.name === "DUPLICATE_REQUEST_ID";
  if (error.name !== "USER_BUSINESS_ERROR" && error.name !== "DUPLICATE_REQUEST_ID") return null;
  if (!aboutBatchId) return null;
  for (const link of error.links ?? []) {
    const match = /\/v1\/payments\/payouts\/([^/?#]+)$/.exec(link.href);
    if (match) return decodeURIComponent(match[1]);
  }
  return null;
}
