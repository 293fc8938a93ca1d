/**
 * Lithic's API through its official SDK (npm `lithic`), for one company's settings: issue a
 * single-use card under an idempotency key, limit it to merchant categories, read it and its
 * transactions, close it, and build the HMAC-signed embed URL that shows it to its payee (the
 * payee's browser loads the card from Lithic: its number and CVV never pass through us). Every
 * call is made outside write units. A refusal Lithic answered is a value; no answer (a timeout,
 * a 5xx, a 429) throws, and the caller asks again under the same key.
 */
import type Lithic from "lithic";
import type { APIError } from "lithic";
import { Webhook } from "standardwebhooks";
import type { LithicSettings } from "./settings.ts";
import type { CardRequest, CardTransaction } from "./rules.ts";
import { untilDurable } from "../platform/durability.ts";

/** A call to Lithic unanswered after this long counts as unanswered. */
export const LITHIC_TIMEOUT_MS = 15_000;
/** Pages of a card's transactions read at most (a single-use card has one or two). */
const TRANSACTION_PAGES_MAX = 10;

/** A card as Lithic reports it (the fields we keep). */
export interface LithicCard {
  readonly token: string;
  readonly state: string;
  readonly lastFour: string;
  readonly spendLimitCents: number;
}

/**
 * How a company reaches Lithic: its settings, and the `fetch` that carries the calls (absent: the
 * network; the sandbox's Lithic is a handler in this process).
 */
export interface LithicReach {
  readonly settings: LithicSettings;
  readonly fetch?: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
}

export type IssueAnswer =
  | { readonly kind: "issued"; readonly card: LithicCard }
  | { readonly kind: "refused"; readonly status: number; readonly message: string };

const cardOf = (card: Lithic.Card): LithicCard => ({
  token: card.token,
  state: card.state,
  lastFour: card.last_four,
  spendLimitCents: card.spend_limit,
});

/**
 * The SDK, imported at the first client: it is a sixth of the routes' loading at every start, and
 * only virtual card payouts use it.
 */
let lithicSdk: Promise<typeof import("lithic")> | undefined;

export class LithicClient {
  readonly #sdk: Lithic;
  readonly #apiError: typeof APIError;

  private constructor(sdk: typeof import("lithic"), reach: LithicReach, timeoutMs: number) {
    const { settings } = reach;
    this.#apiError = sdk.APIError;
    this.#sdk = new sdk.default({
      fetch: (input: RequestInfo | URL, init?: RequestInit) =>
        untilDurable().then(() => (reach.fetch ?? fetch)(input, init)),
      apiKey: settings.apiKey,
      baseURL: settings.baseUrl,
      webhookSecret: settings.webhookSecret,
      timeout: timeoutMs,
      // The job retries under the same idempotency key; the SDK must not retry behind its back.
      maxRetries: 0,
    });
  }

  /** A client for one company's reach. */
  static async open(reach: LithicReach, timeoutMs = LITHIC_TIMEOUT_MS): Promise<LithicClient> {
    return new LithicClient(await (lithicSdk ??= import("lithic")), reach, timeoutMs);
  }

  /** A 4xx other than 408, 409 and 429 is Lithic's answer; anything else leaves it unknown. */
  #answered(error: unknown): error is APIError {
    return error instanceof this.#apiError && typeof error.status === "number" &&
      error.status >= 400 && error.status < 500 && ![408, 409, 429].includes(error.status);
  }

  /** Issues a card; the same `idempotencyKey` again answers the same card. */
  async issueCard(request: CardRequest, idempotencyKey: string): Promise<IssueAnswer> {
    try {
      const card = await this.#sdk.cards.create({ ...request, "Idempotency-Key": idempotencyKey });
      return { kind: "issued", card: cardOf(card) };
    } catch (error) {
      if (this.#answered(error)) {
        return { kind: "refused", status: error.status!, message: error.message };
      }
      throw error;
    }
  }

  /**
   * Declines the card's authorizations outside `mccs` with a card-level rule, unless the card has
   * one already (a submission asked again after a crash adds no second rule).
   */
  async limitMerchants(cardToken: string, mccs: readonly string[]): Promise<void> {
    const existing = await this.#sdk.authRules.v2.list({ card_token: cardToken });
    if (existing.data.length > 0) return;
    await this.#sdk.authRules.v2.create({
      card_tokens: [cardToken],
      type: "CONDITIONAL_BLOCK",
      name: "payout merchant categories",
      parameters: {
        conditions: [{ attribute: "MCC", operation: "IS_NOT_ONE_OF", value: [...mccs] }],
      },
    });
  }

  async card(cardToken: string): Promise<LithicCard> {
    return cardOf(await this.#sdk.cards.retrieve(cardToken));
  }

  /** The card's transactions (all of them: the card is single-use). */
  async transactions(cardToken: string): Promise<CardTransaction[]> {
    const found: CardTransaction[] = [];
    let page = await this.#sdk.transactions.list({ card_token: cardToken });
    for (let n = 1;; n++) {
      found.push(...page.data.map((t) => ({ status: t.status, settled_amount: t.settled_amount })));
      if (!page.hasNextPage()) return found;
      if (n >= TRANSACTION_PAGES_MAX) {
        throw new Error(
          `card ${cardToken} has more than ${TRANSACTION_PAGES_MAX} pages of transactions`,
        );
      }
      page = await page.getNextPage();
    }
  }

  async closeCard(cardToken: string): Promise<LithicCard> {
    return cardOf(await this.#sdk.cards.update(cardToken, { state: "CLOSED" }));
  }

  /** The iframe URL showing the card to its payee until `expiresAt`, signed with the API key. */
  embedUrl(cardToken: string, expiresAt: number): string {
    return this.#sdk.cards.getEmbedURL({
      token: cardToken,
      expiration: new Date(expiresAt).toISOString(),
    });
  }
}

/** Lithic's webhook headers (Standard Webhooks). */
export interface LithicWebhookHeaders {
  readonly id: string | null;
  readonly timestamp: string | null;
  readonly signature: string | null;
}

/**
 * Whether Lithic signed this body with the subscription's secret (Standard Webhooks: HMAC-SHA256
 * of `id.timestamp.body`, within five minutes of now), as the SDK's `webhooks.verifySignature`.
 */
export function lithicSigned(
  secret: string,
  headers: LithicWebhookHeaders,
  body: string,
): boolean {
  if (headers.id === null || headers.timestamp === null || headers.signature === null) return false;
  try {
    new Webhook(secret).verify(body, {
      "webhook-id": headers.id,
      "webhook-timestamp": headers.timestamp,
      "webhook-signature": headers.signature,
    });
    return true;
  } catch {
    return false;
  }
}
