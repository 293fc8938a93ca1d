/**
 * A contract test server for PayPal's Payouts API: a local HTTP server (127.0.0.1, a free port)
 * that a test starts and closes, implementing the documented endpoints the PayPal rail calls —
 * POST /v1/oauth2/token, POST /v1/payments/payouts, GET /v1/payments/payouts/{payout_batch_id},
 * GET /v1/payments/payouts-item/{payout_item_id}, POST /v1/payments/payouts-item/{id}/cancel,
 * POST /v1/notifications/verify-webhook-signature — with PayPal's documented error bodies
 * ({name, message, debug_id, information_link, details, links}). Like PayPal, it refuses a
 * sender_batch_id it already has (USER_BUSINESS_ERROR naming SENDER_BATCH_ID, with a link to the
 * original batch) and lets only an UNCLAIMED item be cancelled (ITEM_INCORRECT_STATUS). A test
 * scripts the rest: an item's state, a 5xx, a call that never answers, a batch taken before the
 * answer is lost, and signed webhooks.
 */

/** An item as PayPal reports it. */
export interface ContractItem {
  readonly payout_item_id: string;
  readonly payout_batch_id: string;
  transaction_status: string;
  readonly payout_item: {
    readonly recipient_type: string;
    readonly recipient_wallet: string;
    readonly receiver: string;
    readonly amount: { readonly currency: string; readonly value: string };
    readonly sender_item_id: string;
  };
  errors?: { name: string; message: string };
}

/** What the next matching call gets instead of its normal answer. */
export type Disruption =
  /** 500 INTERNAL_SERVER_ERROR, nothing done. */
  | "5xx"
  /** No answer until the caller gives up (its timeout), nothing done. */
  | "hang"
  /** The call is carried out (a batch is taken), then answered 500. */
  | "take_then_5xx"
  /** The call is carried out, then never answered. */
  | "take_then_hang";

interface ScriptedDisruption {
  readonly method: string;
  readonly path: RegExp;
  readonly disruption: Disruption;
}

const INFORMATION_LINK = "https://developer.paypal.com/docs/api/payments.payouts-batch/#errors";

export class PaypalContractServer {
  readonly clientId = "contract-client-id";
  readonly clientSecret = "contract-client-secret";
  readonly webhookId = "WH-CONTRACT-1";
  /** Every request, in order: `METHOD /path`. */
  readonly requests: string[] = [];
  /** Batches by PayPal's id, each with its sender_batch_id and item ids. */
  readonly batches = new Map<string, { senderBatchId: string; itemIds: string[] }>();
  readonly items = new Map<string, ContractItem>();
  tokensIssued = 0;
  /** Runs right after a batch was taken (a test's crash of the caller). */
  afterTake: (() => void) | null = null;
  readonly #bySenderBatchId = new Map<string, string>();
  readonly #tokens = new Set<string>();
  readonly #signatures = new Map<string, { signature: string; eventId: string }>();
  readonly #script: ScriptedDisruption[] = [];
  readonly #hanging = new Set<() => void>();
  #sequence = 0;
  #server: Deno.HttpServer | null = null;
  baseUrl = "";

  static async start(): Promise<PaypalContractServer> {
    const server = new PaypalContractServer();
    const listening = Promise.withResolvers<void>();
    server.#server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) => {
        server.baseUrl = `http://127.0.0.1:${port}`;
        listening.resolve();
      },
    }, (request) => server.#handle(request));
    await listening.promise;
    return server;
  }

  /** The settings JSON that points the rail at this server. */
  settingsJson(): Record<string, string> {
    return {
      client_id: this.clientId,
      client_secret: this.clientSecret,
      base_url: this.baseUrl,
      webhook_id: this.webhookId,
    };
  }

  /** The next `method` call to a path `path` matches is disrupted. */
  disruptNext(method: string, path: RegExp, disruption: Disruption): void {
    this.#script.push({ method, path, disruption });
  }

  /** The item PayPal made of `senderItemId` most recently. */
  itemOf(senderItemId: string): ContractItem {
    const found = [...this.items.values()].filter((item) =>
      item.payout_item.sender_item_id === senderItemId
    );
    if (found.length === 0) throw new Error(`the contract server has no item ${senderItemId}`);
    return found[found.length - 1];
  }

  /** How many items were ever created for `senderItemId` (one per payment PayPal would make). */
  paymentsOf(senderItemId: string): number {
    return [...this.items.values()].filter((item) =>
      item.payout_item.sender_item_id === senderItemId
    ).length;
  }

  /** Sets an item's state, with PayPal's error name for FAILED, RETURNED and the like. */
  setItemState(senderItemId: string, status: string, errorName?: string): ContractItem {
    const item = this.itemOf(senderItemId);
    item.transaction_status = status;
    item.errors = errorName ? { name: errorName, message: `contract: ${errorName}` } : undefined;
    return item;
  }

  /** A webhook event about an item, and the headers PayPal would sign it with. */
  signedItemWebhook(
    eventType: string,
    item: ContractItem,
  ): { body: Record<string, unknown>; headers: Record<string, string> } {
    const body = {
      id: `WH-${this.#next()}`,
      event_version: "1.0",
      create_time: new Date().toISOString(),
      resource_type: "payouts_item",
      event_type: eventType,
      summary: `Payout item ${eventType}`,
      // What a webhook says is never acted on: the rail reads the item from PayPal.
      resource: { ...item, transaction_status: "SUCCESS" },
    };
    const transmissionId = crypto.randomUUID();
    const signature = btoa(`${transmissionId}:${body.id}:${this.#next()}`);
    this.#signatures.set(transmissionId, { signature, eventId: body.id });
    return {
      body,
      headers: {
        "PAYPAL-AUTH-ALGO": "SHA256withRSA",
        "PAYPAL-CERT-URL": `${this.baseUrl}/v1/notifications/certs/CERT-contract`,
        "PAYPAL-TRANSMISSION-ID": transmissionId,
        "PAYPAL-TRANSMISSION-SIG": signature,
        "PAYPAL-TRANSMISSION-TIME": new Date().toISOString(),
      },
    };
  }

  async close(): Promise<void> {
    for (const release of this.#hanging) release();
    this.#hanging.clear();
    await this.#server?.shutdown();
  }

  #next(): string {
    this.#sequence++;
    return this.#sequence.toString(36).toUpperCase().padStart(6, "0");
  }

  #error(
    status: number,
    name: string,
    message: string,
    extra: Record<string, unknown> = {},
  ): Response {
    return Response.json({
      name,
      message,
      debug_id: `dbg${this.#next().toLowerCase()}`,
      information_link: INFORMATION_LINK,
      ...extra,
    }, { status });
  }

  #disruptionFor(method: string, path: string): Disruption | null {
    const index = this.#script.findIndex((s) => s.method === method && s.path.test(path));
    if (index < 0) return null;
    return this.#script.splice(index, 1)[0].disruption;
  }

  /** Never answers: the caller gives up (its timeout); the server lets go when it closes. */
  #hang(): Promise<Response> {
    return new Promise((resolve) => {
      this.#hanging.add(() => resolve(new Response(null, { status: 504 })));
    });
  }

  async #handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname;
    this.requests.push(`${request.method} ${path}`);
    const disruption = this.#disruptionFor(request.method, path);
    if (disruption === "5xx") {
      await request.body?.cancel();
      return this.#error(500, "INTERNAL_SERVER_ERROR", "An internal server error has occurred.");
    }
    if (disruption === "hang") return await this.#hang();
    const response = await this.#route(request, path);
    if (disruption === "take_then_5xx") {
      return this.#error(500, "INTERNAL_SERVER_ERROR", "An internal server error has occurred.");
    }
    if (disruption === "take_then_hang") return await this.#hang();
    return response;
  }

  async #route(request: Request, path: string): Promise<Response> {
    if (request.method === "POST" && path === "/v1/oauth2/token") return this.#token(request);
    const auth = request.headers.get("Authorization") ?? "";
    if (!auth.startsWith("Bearer ") || !this.#tokens.has(auth.slice("Bearer ".length))) {
      await request.body?.cancel();
      return this.#error(
        401,
        "AUTHENTICATION_FAILURE",
        "Authentication failed due to invalid authentication credentials or a missing Authorization header.",
        { links: [] },
      );
    }
    let match: RegExpExecArray | null;
    if (request.method === "POST" && path === "/v1/payments/payouts") {
      return this.#createBatch(await request.json());
    }
    if (request.method === "GET" && (match = /^\/v1\/payments\/payouts\/([^/]+)$/.exec(path))) {
      return this.#getBatch(match[1]);
    }
    if (
      request.method === "GET" && (match = /^\/v1\/payments\/payouts-item\/([^/]+)$/.exec(path))
    ) {
      const item = this.items.get(match[1]);
      return item ? Response.json(this.#itemView(item)) : this.#notFound();
    }
    if (
      request.method === "POST" &&
      (match = /^\/v1\/payments\/payouts-item\/([^/]+)\/cancel$/.exec(path))
    ) {
      await request.body?.cancel();
      return this.#cancel(match[1]);
    }
    if (request.method === "POST" && path === "/v1/notifications/verify-webhook-signature") {
      return this.#verify(await request.json());
    }
    await request.body?.cancel();
    return this.#notFound();
  }

  async #token(request: Request): Promise<Response> {
    const body = await request.text();
    const expected = `Basic ${btoa(`${this.clientId}:${this.clientSecret}`)}`;
    if (request.headers.get("Authorization") !== expected) {
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
    const token = `A21AA${this.#next()}${crypto.randomUUID().replaceAll("-", "")}`;
    this.#tokens.add(token);
    this.tokensIssued++;
    return Response.json({
      scope: "https://uri.paypal.com/services/payments/payouts",
      access_token: token,
      token_type: "Bearer",
      app_id: "APP-CONTRACT",
      expires_in: 32400,
      nonce: `${new Date().toISOString()}${this.#next()}`,
    });
  }

  #notFound(): Response {
    return this.#error(404, "INVALID_RESOURCE_ID", "Requested resource ID was not found.");
  }

  #validation(field: string, issue: string): Response {
    return this.#error(400, "VALIDATION_ERROR", "Invalid request - see details.", {
      details: [{ field, location: "body", issue }],
    });
  }

  #createBatch(body: Record<string, unknown>): Response {
    const header = body.sender_batch_header as Record<string, unknown> | undefined;
    const senderBatchId = header?.sender_batch_id;
    if (typeof senderBatchId !== "string" || senderBatchId === "") {
      return this.#validation("sender_batch_header.sender_batch_id", "Required field is missing.");
    }
    const original = this.#bySenderBatchId.get(senderBatchId);
    if (original !== undefined) {
      return this.#error(400, "USER_BUSINESS_ERROR", "User business error.", {
        details: [{
          field: "SENDER_BATCH_ID",
          location: "body",
          issue: `Batch with given sender_batch_id already exists`,
        }],
        links: [{
          href: `${this.baseUrl}/v1/payments/payouts/${original}`,
          rel: "self",
          method: "GET",
          encType: "application/json",
        }],
      });
    }
    const items = body.items as Record<string, unknown>[] | undefined;
    if (!Array.isArray(items) || items.length === 0 || items.length > 15_000) {
      return this.#validation("items", "1 to 15000 items are required.");
    }
    for (const [index, item] of items.entries()) {
      const amount = item.amount as { currency?: string; value?: string } | undefined;
      if (typeof item.receiver !== "string" || item.receiver === "") {
        return this.#validation(`items[${index}].receiver`, "Required field is missing.");
      }
      if (!amount || amount.currency !== "USD" || !/^\d+\.\d{2}$/.test(amount.value ?? "")) {
        return this.#validation(`items[${index}].amount`, "Invalid amount.");
      }
      if (item.recipient_wallet !== "PAYPAL" && item.recipient_wallet !== "VENMO") {
        return this.#validation(`items[${index}].recipient_wallet`, "Invalid recipient wallet.");
      }
    }
    const payoutBatchId = `BATCH${this.#next()}`;
    this.#bySenderBatchId.set(senderBatchId, payoutBatchId);
    const itemIds: string[] = [];
    for (const item of items) {
      const id = `ITEM${this.#next()}`;
      itemIds.push(id);
      this.items.set(id, {
        payout_item_id: id,
        payout_batch_id: payoutBatchId,
        transaction_status: "PENDING",
        payout_item: {
          recipient_type: String(item.recipient_type ?? "EMAIL"),
          recipient_wallet: String(item.recipient_wallet),
          receiver: String(item.receiver),
          amount: item.amount as { currency: string; value: string },
          sender_item_id: String(item.sender_item_id ?? ""),
        },
      });
    }
    this.batches.set(payoutBatchId, { senderBatchId, itemIds });
    this.afterTake?.();
    return Response.json({
      batch_header: {
        payout_batch_id: payoutBatchId,
        batch_status: "PENDING",
        sender_batch_header: { sender_batch_id: senderBatchId },
      },
      links: [{
        href: `${this.baseUrl}/v1/payments/payouts/${payoutBatchId}`,
        rel: "self",
        method: "GET",
        encType: "application/json",
      }],
    }, { status: 201 });
  }

  #getBatch(payoutBatchId: string): Response {
    const batch = this.batches.get(payoutBatchId);
    if (!batch) return this.#notFound();
    const items = batch.itemIds.map((id) => this.#itemView(this.items.get(id)!));
    const open = items.some((item) =>
      ["PENDING", "UNCLAIMED", "ONHOLD", "HELD"].includes(
        item.transaction_status,
      )
    );
    return Response.json({
      batch_header: {
        payout_batch_id: payoutBatchId,
        batch_status: open ? "PROCESSING" : "SUCCESS",
        sender_batch_header: { sender_batch_id: batch.senderBatchId },
      },
      items,
      links: [],
    });
  }

  #itemView(item: ContractItem) {
    return {
      payout_item_id: item.payout_item_id,
      transaction_id: `TX${item.payout_item_id}`,
      transaction_status: item.transaction_status,
      payout_batch_id: item.payout_batch_id,
      payout_item: item.payout_item,
      ...(item.errors ? { errors: item.errors } : {}),
      links: [{
        href: `${this.baseUrl}/v1/payments/payouts-item/${item.payout_item_id}`,
        rel: "item",
        method: "GET",
      }],
    };
  }

  #cancel(itemId: string): Response {
    const item = this.items.get(itemId);
    if (!item) return this.#notFound();
    if (item.transaction_status !== "UNCLAIMED") {
      return this.#error(
        400,
        "ITEM_INCORRECT_STATUS",
        "You can only cancel items that are in UNCLAIMED state.",
      );
    }
    item.transaction_status = "RETURNED";
    return Response.json(this.#itemView(item));
  }

  #verify(body: Record<string, unknown>): Response {
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
        return this.#validation(field, "Required field is missing.");
      }
    }
    const signed = this.#signatures.get(String(body.transmission_id));
    const event = body.webhook_event as { id?: unknown };
    const verified = signed !== undefined && signed.signature === body.transmission_sig &&
      signed.eventId === event.id && body.webhook_id === this.webhookId;
    return Response.json({ verification_status: verified ? "SUCCESS" : "FAILURE" });
  }
}
