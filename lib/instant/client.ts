/**
 * Increase's API for instant deposit, on fetch (npm has no official Increase SDK this service can
 * use; the shapes follow Increase's API reference and its official TypeScript SDK's types): card
 * tokens and their capabilities, $0 card validations and card push transfers, each creation under an
 * Idempotency-Key, and the webhook signature check. Every call is made outside write units. A
 * refusal Increase answered (a 4xx other than 408, 409 and 429) is a value; no answer throws, and
 * the caller asks again under the same key.
 */
import { hmacSha256Hex } from "../platform/keys.ts";
import type { IncreaseSettings } from "./settings.ts";
import type { CardCapabilities, CardValidationState } from "./rules.ts";
import { untilDurable } from "../platform/durability.ts";

/** A call to Increase unanswered after this long counts as unanswered. */
export const INCREASE_TIMEOUT_MS = 15_000;
/** How old a webhook's signature timestamp may be. */
export const WEBHOOK_TOLERANCE_MS = 5 * 60_000;

/** A card validation as Increase reports it. */
export interface IncreaseValidation extends CardValidationState {
  readonly id: string;
  readonly card_token_id: string;
  readonly route: string;
}

/**
 * A Card Token as Increase reports it (`GET /card_tokens/{id}`): what the vault made of the card
 * number the payee typed at the tokenization provider's page, never the number itself.
 */
export interface IncreaseCardToken {
  readonly id: string;
  readonly created_at: string;
  /** ISO 8601 date. */
  readonly expiration_date: string;
  readonly last4: string;
  readonly length: number;
  readonly prefix: string;
  readonly type: "card_token";
}

/** A card push transfer as Increase reports it. */
export interface IncreasePush {
  readonly id: string;
  readonly status: string;
  readonly route: string;
  readonly card_token_id: string;
  readonly presentment_amount: { readonly currency: string; readonly value: string };
  readonly decline: { readonly reason: string } | null;
}

/** Increase gave no answer (a timeout, a 5xx, a 408, 409 or 429): ask again under the same key. */
export class IncreaseUnanswered extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "IncreaseUnanswered";
  }
}

/** A Real-Time Payments transfer as Increase reports it. */
export interface IncreaseRtpTransfer {
  readonly id: string;
  readonly status: string;
  readonly amount: number;
  readonly routing_number: string;
  readonly rejection: { readonly reject_reason_code: string } | null;
}

export type IncreaseAnswer<T> =
  | { readonly kind: "ok"; readonly value: T }
  | {
    readonly kind: "refused";
    readonly status: number;
    readonly type: string;
    readonly detail: string;
  };

/** How a client reaches Increase: `fetch` over the network, or the sandbox's simulator in process. */
export type IncreaseTransport = (request: Request) => Promise<Response>;

export class IncreaseClient {
  constructor(
    readonly settings: IncreaseSettings,
    readonly timeoutMs = INCREASE_TIMEOUT_MS,
    readonly transport: IncreaseTransport = (request) => fetch(request),
  ) {}

  async #call<T>(
    method: "GET" | "POST",
    path: string,
    options: { body?: unknown; idempotencyKey?: string } = {},
  ): Promise<IncreaseAnswer<T>> {
    let response: Response;
    let text: string;
    await untilDurable();
    try {
      response = await this.transport(
        new Request(`${this.settings.baseUrl}${path}`, {
          method,
          headers: {
            Authorization: `Bearer ${this.settings.apiKey}`,
            Accept: "application/json",
            ...(options.body === undefined ? {} : { "Content-Type": "application/json" }),
            ...(options.idempotencyKey ? { "Idempotency-Key": options.idempotencyKey } : {}),
          },
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
          signal: AbortSignal.timeout(this.timeoutMs),
        }),
      );
      text = await response.text();
    } catch (error) {
      throw new IncreaseUnanswered(
        `${method} ${path}: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    if (response.ok) return { kind: "ok", value: JSON.parse(text) as T };
    if (response.status >= 500 || [408, 409, 429].includes(response.status)) {
      throw new IncreaseUnanswered(
        `Increase answered ${response.status} to ${method} ${path}: ${text.slice(0, 200)}`,
      );
    }
    let error: { type?: string; title?: string; detail?: string } = {};
    try {
      error = JSON.parse(text);
    } catch {
      // Not Increase's error body: the status says enough.
    }
    return {
      kind: "refused",
      status: response.status,
      type: error.type ?? "unknown_error",
      detail: error.detail ?? error.title ?? text.slice(0, 200),
    };
  }

  /** The Card Token the vault made (its last four digits), with the API key. */
  cardToken(cardTokenId: string): Promise<IncreaseAnswer<IncreaseCardToken>> {
    return this.#call("GET", `/card_tokens/${encodeURIComponent(cardTokenId)}`);
  }

  capabilities(cardTokenId: string): Promise<IncreaseAnswer<CardCapabilities>> {
    return this.#call("GET", `/card_tokens/${encodeURIComponent(cardTokenId)}/capabilities`);
  }

  /** A $0 validation of the card with the payee's name and ZIP; the same key answers the same one. */
  createValidation(
    params: {
      cardTokenId: string;
      firstName: string;
      lastName: string;
      postalCode: string;
    },
    idempotencyKey: string,
  ): Promise<IncreaseAnswer<IncreaseValidation>> {
    const m = this.settings.merchant;
    return this.#call("POST", "/card_validations", {
      idempotencyKey,
      body: {
        account_id: this.settings.accountId,
        card_token_id: params.cardTokenId,
        cardholder_first_name: params.firstName,
        cardholder_last_name: params.lastName,
        cardholder_postal_code: params.postalCode,
        merchant_category_code: m.categoryCode,
        merchant_city_name: m.city,
        merchant_name: m.name,
        merchant_postal_code: m.postalCode,
        merchant_state: m.state,
      },
    });
  }

  validation(id: string): Promise<IncreaseAnswer<IncreaseValidation>> {
    return this.#call("GET", `/card_validations/${encodeURIComponent(id)}`);
  }

  /** Pushes `amount` ("12.34") to the card; the same key answers the same transfer, never a second. */
  createPush(
    params: { cardTokenId: string; amount: string; recipientName: string },
    idempotencyKey: string,
  ): Promise<IncreaseAnswer<IncreasePush>> {
    const m = this.settings.merchant;
    return this.#call("POST", "/card_push_transfers", {
      idempotencyKey,
      body: {
        business_application_identifier: "funds_disbursement",
        card_token_id: params.cardTokenId,
        merchant_category_code: m.categoryCode,
        merchant_city_name: m.city,
        merchant_name: m.name,
        merchant_name_prefix: m.namePrefix,
        merchant_postal_code: m.postalCode,
        merchant_state: m.state,
        presentment_amount: { currency: "USD", value: params.amount },
        recipient_name: params.recipientName,
        sender_address_city: m.city,
        sender_address_line1: m.addressLine1,
        sender_address_postal_code: m.postalCode,
        sender_address_state: m.state,
        sender_name: m.name,
        source_account_number_id: this.settings.sourceAccountNumberId,
      },
    });
  }

  push(id: string): Promise<IncreaseAnswer<IncreasePush>> {
    return this.#call("GET", `/card_push_transfers/${encodeURIComponent(id)}`);
  }

  /** Whether the bank of `routingNumber` takes Real-Time Payments transfers (Increase's routing lookup). */
  async rtpReachable(routingNumber: string): Promise<boolean> {
    const found = await this.#call<{ data: { real_time_payments_transfers: string }[] }>(
      "GET",
      `/routing_numbers?routing_number=${encodeURIComponent(routingNumber)}`,
    );
    if (found.kind !== "ok") return false;
    return found.value.data.some((bank) => bank.real_time_payments_transfers === "supported");
  }

  /** Sends `amountCents` over Real-Time Payments; the same key answers the same transfer. */
  createRtp(
    params: {
      amountCents: number;
      creditorName: string;
      accountNumber: string;
      routingNumber: string;
      remittance: string;
    },
    idempotencyKey: string,
  ): Promise<IncreaseAnswer<IncreaseRtpTransfer>> {
    return this.#call("POST", "/real_time_payments_transfers", {
      idempotencyKey,
      body: {
        amount: params.amountCents,
        creditor_name: params.creditorName,
        account_number: params.accountNumber,
        routing_number: params.routingNumber,
        source_account_number_id: this.settings.sourceAccountNumberId,
        unstructured_remittance_information: params.remittance,
      },
    });
  }

  rtp(id: string): Promise<IncreaseAnswer<IncreaseRtpTransfer>> {
    return this.#call("GET", `/real_time_payments_transfers/${encodeURIComponent(id)}`);
  }
}

/** The `Increase-Webhook-Signature` value Increase sends for `body` at `at` (`t=<ISO time>,v1=<hex>`). */
export async function increaseSignature(secret: string, body: string, at: Date): Promise<string> {
  const t = at.toISOString().replace(/\.\d{3}Z$/, "Z");
  return `t=${t},v1=${await hmacSha256Hex(secret, `${t}.${body}`)}`;
}

/**
 * Whether Increase signed this body with the event subscription's secret: the header's `v1` is
 * HMAC-SHA256 of `<t>.<body>` (hex), and `t` is within five minutes of `realNow`.
 */
export async function increaseSigned(
  secret: string,
  header: string | null,
  body: string,
  realNow: number,
): Promise<boolean> {
  if (header === null) return false;
  const parts = new Map(
    header.split(",").map((part) => {
      const at = part.indexOf("=");
      return [part.slice(0, at).trim(), part.slice(at + 1).trim()] as const;
    }),
  );
  const t = parts.get("t");
  const signatures = header.split(",").filter((p) => p.trim().startsWith("v1="))
    .map((p) => p.trim().slice(3));
  if (!t || signatures.length === 0) return false;
  const at = Date.parse(t);
  if (Number.isNaN(at) || Math.abs(realNow - at) > WEBHOOK_TOLERANCE_MS) return false;
  const expected = await hmacSha256Hex(secret, `${t}.${body}`);
  return signatures.some((s) => constantTimeEqual(s, expected));
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
