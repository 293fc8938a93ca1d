/**
 * PayPal's Payouts API as PayPal documents it (developer.paypal.com, "Payouts" and "REST API
 * responses"), over a book that keeps its state: the endpoints the PayPal rail calls — POST
 * /v1/oauth2/token, POST /v1/payments/payouts, GET /v1/payments/payouts/{payout_batch_id}, GET
 * /v1/payments/payouts-item/{payout_item_id}, POST /v1/payments/payouts-item/{id}/cancel, POST
 * /v1/notifications/verify-webhook-signature — with PayPal's error bodies ({name, message,
 * debug_id, information_link, details, links}). Like PayPal it refuses a sender_batch_id it already
 * has (USER_BUSINESS_ERROR naming SENDER_BATCH_ID, with a link to the original batch) and cancels
 * only an UNCLAIMED item (ITEM_INCORRECT_STATUS). The sandbox's PayPal simulator
 * (lib/paypal/simulator.ts) keeps its book in the test database; the contract test server keeps
 * one in memory and scripts the rest.
 */

/** An item as PayPal reports it. */
export interface PayoutsItem {
  readonly payout_item_id: string;
  readonly payout_batch_id: string;
  readonly transaction_status: string;
  readonly payout_item: {
    readonly recipient_type: string;
    readonly recipient_wallet: string;
    readonly receiver: string;
    readonly amount: { readonly currency: string; readonly value: string };
    readonly sender_item_id: string;
  };
  readonly errors?: { readonly name: string; readonly message: string };
}

/** One item of a batch to take, as checked. */
export interface ItemToTake {
  readonly recipient_type: string;
  readonly recipient_wallet: "PAYPAL" | "VENMO";
  readonly receiver: string;
  readonly amount: { readonly currency: string; readonly value: string };
  readonly sender_item_id: string;
}

/** The fields verify-webhook-signature takes. */
export interface WebhookSignature {
  readonly auth_algo: string;
  readonly cert_url: string;
  readonly transmission_id: string;
  readonly transmission_sig: string;
  readonly transmission_time: string;
  readonly webhook_id: string;
  readonly webhook_event: { readonly id?: unknown };
}

/** Where a Payouts API keeps its state; `account` is the REST app a token was issued to. */
export interface PayoutsBook {
  /** The account of these client credentials, or null when PayPal would refuse them. */
  authenticate(clientId: string, clientSecret: string): Promise<string | null>;
  /** A new access token of the account. */
  issueToken(account: string): Promise<string>;
  /** The account a token was issued to, or null for a token PayPal does not know. */
  accountOf(token: string): Promise<string | null>;
  /**
   * Takes a batch once per sender_batch_id: a new one is kept with its items (PENDING or what
   * the book decides) and `taken` is true; one seen before answers with the first batch's id.
   */
  takeBatch(
    account: string,
    senderBatchId: string,
    items: readonly ItemToTake[],
  ): Promise<{ readonly payoutBatchId: string; readonly taken: boolean }>;
  /**
   * A batch of the account with its items, in their order, or null; `batchStatus` when the book
   * decided it (DENIED), else it is PROCESSING while an item is open and SUCCESS after.
   */
  batch(
    account: string,
    payoutBatchId: string,
  ): Promise<
    {
      readonly senderBatchId: string;
      readonly items: readonly PayoutsItem[];
      readonly batchStatus?: string;
    } | null
  >;
  /** An item of the account, or null. */
  item(account: string, payoutItemId: string): Promise<PayoutsItem | null>;
  /** Marks a cancelled UNCLAIMED item RETURNED (PayPal gives the money back); returns it. */
  returnItem(account: string, payoutItemId: string): Promise<PayoutsItem>;
  /** Whether the book signed this webhook for the account's webhook id. */
  verify(account: string, signature: WebhookSignature): Promise<boolean>;
  /** A fresh debug_id for an error body. */
  debugId(): string;
}

const INFORMATION_LINK = "https://developer.paypal.com/docs/api/payments.payouts-batch/#errors";

/** Items one batch takes at most (PayPal: 15,000). */
export const PAYOUT_ITEMS_MAX = 15_000;

/** How long PayPal's access tokens last, in seconds (its documented 32,400: nine hours). */
export const TOKEN_EXPIRES_IN_S = 32_400;

/** States in which PayPal still works on an item: a batch holding one is still processing. */
export const OPEN_STATES = new Set(["PENDING", "UNCLAIMED", "ONHOLD"]);

/** PayPal's Payouts API over `book`: a fetch handler. */
export function payoutsApi(book: PayoutsBook): (request: Request) => Promise<Response> {
  const error = (
    status: number,
    name: string,
    message: string,
    extra: Record<string, unknown> = {},
  ): Response =>
    Response.json({
      name,
      message,
      debug_id: book.debugId(),
      information_link: INFORMATION_LINK,
      ...extra,
    }, { status });
  const notFound = () => error(404, "INVALID_RESOURCE_ID", "Requested resource ID was not found.");
  const validation = (field: string, issue: string) =>
    error(400, "VALIDATION_ERROR", "Invalid request - see details.", {
      details: [{ field, location: "body", issue }],
    });

  const itemView = (origin: string, item: PayoutsItem) => ({
    payout_item_id: item.payout_item_id,
    transaction_id: `TX${item.payout_item_id}`,
    transaction_status: item.transaction_status,
    payout_batch_id: item.payout_batch_id,
    payout_item: item.payout_item,
    ...(item.errors ? { errors: item.errors } : {}),
    links: [{
      href: `${origin}/v1/payments/payouts-item/${item.payout_item_id}`,
      rel: "item",
      method: "GET",
    }],
  });

  async function token(request: Request): Promise<Response> {
    const body = await request.text();
    const [scheme, encoded] = (request.headers.get("Authorization") ?? "").split(" ");
    let credentials: string[] = [];
    try {
      credentials = scheme === "Basic" ? atob(encoded ?? "").split(":") : [];
    } catch {
      // Not base64: refused below as any wrong credentials.
    }
    const account = credentials.length === 2
      ? await book.authenticate(credentials[0], credentials[1])
      : null;
    if (account === null) {
      return Response.json({
        error: "invalid_client",
        error_description: "Client Authentication failed",
      }, { status: 401 });
    }
    if (new URLSearchParams(body).get("grant_type") !== "client_credentials") {
      return Response.json({
        error: "unsupported_grant_type",
        error_description: "Grant Type is NULL",
      }, { status: 400 });
    }
    return Response.json({
      scope: "https://uri.paypal.com/services/payments/payouts",
      access_token: await book.issueToken(account),
      token_type: "Bearer",
      app_id: `APP-${account}`,
      expires_in: TOKEN_EXPIRES_IN_S,
      nonce: `${new Date().toISOString()}${book.debugId()}`,
    });
  }

  async function createBatch(
    origin: string,
    account: string,
    body: Record<string, unknown>,
  ): Promise<Response> {
    const header = body.sender_batch_header as Record<string, unknown> | undefined;
    const senderBatchId = header?.sender_batch_id;
    if (typeof senderBatchId !== "string" || senderBatchId === "") {
      return validation("sender_batch_header.sender_batch_id", "Required field is missing.");
    }
    const items = body.items as Record<string, unknown>[] | undefined;
    if (!Array.isArray(items) || items.length === 0 || items.length > PAYOUT_ITEMS_MAX) {
      return validation("items", `1 to ${PAYOUT_ITEMS_MAX} items are required.`);
    }
    const taking: ItemToTake[] = [];
    for (const [index, item] of items.entries()) {
      const amount = item.amount as { currency?: string; value?: string } | undefined;
      if (typeof item.receiver !== "string" || item.receiver === "") {
        return validation(`items[${index}].receiver`, "Required field is missing.");
      }
      if (!amount || amount.currency !== "USD" || !/^\d+\.\d{2}$/.test(amount.value ?? "")) {
        return validation(`items[${index}].amount`, "Invalid amount.");
      }
      if (item.recipient_wallet !== "PAYPAL" && item.recipient_wallet !== "VENMO") {
        return validation(`items[${index}].recipient_wallet`, "Invalid recipient wallet.");
      }
      taking.push({
        recipient_type: String(item.recipient_type ?? "EMAIL"),
        recipient_wallet: item.recipient_wallet,
        receiver: item.receiver,
        amount: { currency: amount.currency, value: amount.value! },
        sender_item_id: String(item.sender_item_id ?? ""),
      });
    }
    const { payoutBatchId, taken } = await book.takeBatch(account, senderBatchId, taking);
    const link = {
      href: `${origin}/v1/payments/payouts/${payoutBatchId}`,
      rel: "self",
      method: "GET",
      encType: "application/json",
    };
    if (!taken) {
      return error(400, "USER_BUSINESS_ERROR", "User business error.", {
        details: [{
          field: "SENDER_BATCH_ID",
          location: "body",
          issue: "Batch with given sender_batch_id already exists",
        }],
        links: [link],
      });
    }
    return Response.json({
      batch_header: {
        payout_batch_id: payoutBatchId,
        batch_status: "PENDING",
        sender_batch_header: { sender_batch_id: senderBatchId },
      },
      links: [link],
    }, { status: 201 });
  }

  async function getBatch(origin: string, account: string, id: string): Promise<Response> {
    const batch = await book.batch(account, id);
    if (!batch) return notFound();
    const open = batch.items.some((item) => OPEN_STATES.has(item.transaction_status));
    return Response.json({
      batch_header: {
        payout_batch_id: id,
        batch_status: batch.batchStatus ?? (open ? "PROCESSING" : "SUCCESS"),
        sender_batch_header: { sender_batch_id: batch.senderBatchId },
      },
      items: batch.items.map((item) => itemView(origin, item)),
      links: [],
    });
  }

  async function cancel(origin: string, account: string, id: string): Promise<Response> {
    const item = await book.item(account, id);
    if (!item) return notFound();
    if (item.transaction_status !== "UNCLAIMED") {
      return error(
        400,
        "ITEM_INCORRECT_STATUS",
        "You can only cancel items that are in UNCLAIMED state.",
      );
    }
    return Response.json(itemView(origin, await book.returnItem(account, id)));
  }

  async function verify(account: string, body: Record<string, unknown>): Promise<Response> {
    for (
      const field of [
        "auth_algo",
        "cert_url",
        "transmission_id",
        "transmission_sig",
        "transmission_time",
        "webhook_id",
        "webhook_event",
      ]
    ) {
      if (body[field] === undefined || body[field] === null) {
        return validation(field, "Required field is missing.");
      }
    }
    const verified = await book.verify(account, body as unknown as WebhookSignature);
    return Response.json({ verification_status: verified ? "SUCCESS" : "FAILURE" });
  }

  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const { origin, pathname: path } = url;
    const method = request.method;
    if (method === "POST" && path === "/v1/oauth2/token") return await token(request);
    const auth = request.headers.get("Authorization") ?? "";
    const account = auth.startsWith("Bearer ")
      ? await book.accountOf(auth.slice("Bearer ".length))
      : null;
    if (account === null) {
      await request.body?.cancel();
      return error(
        401,
        "AUTHENTICATION_FAILURE",
        "Authentication failed due to invalid authentication credentials or a missing Authorization header.",
        { links: [] },
      );
    }
    let match: RegExpExecArray | null;
    if (method === "POST" && path === "/v1/payments/payouts") {
      return await createBatch(origin, account, await request.json());
    }
    if (method === "GET" && (match = /^\/v1\/payments\/payouts\/([^/]+)$/.exec(path))) {
      return await getBatch(origin, account, decodeURIComponent(match[1]));
    }
    if (method === "GET" && (match = /^\/v1\/payments\/payouts-item\/([^/]+)$/.exec(path))) {
      const item = await book.item(account, decodeURIComponent(match[1]));
      return item ? Response.json(itemView(origin, item)) : notFound();
    }
    if (
      method === "POST" && (match = /^\/v1\/payments\/payouts-item\/([^/]+)\/cancel$/.exec(path))
    ) {
      await request.body?.cancel();
      return await cancel(origin, account, decodeURIComponent(match[1]));
    }
    if (method === "POST" && path === "/v1/notifications/verify-webhook-signature") {
      return await verify(account, await request.json());
    }
    await request.body?.cancel();
    return notFound();
  };
}
