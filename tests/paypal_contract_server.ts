/**
 * A contract test server for PayPal's Payouts API: a local HTTP server (127.0.0.1, a free port)
 * that a test starts and closes (or, for the simulation, the same answered in process), serving PayPal's documented endpoints as lib/paypal/payouts_api.ts
 * implements them from PayPal's docs (the API the sandbox's PayPal simulator serves too), over a
 * book kept in memory that the test reads and scripts: an item's state, a 5xx, a call that never
 * answers, a batch taken before the answer is lost, and signed webhooks. Every item it takes
 * starts PENDING; nothing moves unless the test moves it.
 */
import {
  type ItemToTake,
  payoutsApi,
  type PayoutsBook,
  type PayoutsItem,
  type WebhookSignature,
} from "../lib/paypal/payouts_api.ts";

/** An item as PayPal reports it; a test changes its state. */
export type ContractItem = { -readonly [K in keyof PayoutsItem]: PayoutsItem[K] };

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

export class PaypalContractServer implements PayoutsBook {
  readonly clientId = "contract-client-id";
  readonly clientSecret = "contract-client-secret";
  readonly webhookId = "WH-CONTRACT-1";
  /** Every request, in order: `METHOD /path`. */
  readonly requests: string[] = [];
  /** Batches by PayPal's id, each with its sender_batch_id and item ids. */
  readonly batches = new Map<string, { senderBatchId: string; itemIds: string[] }>();
  readonly items = new Map<string, ContractItem>();
  /** Batch statuses a test set (DENIED); any other batch reads PROCESSING or SUCCESS. */
  readonly batchStatuses = new Map<string, string>();
  tokensIssued = 0;
  /** Runs right after a batch was taken (a test's crash of the caller). */
  afterTake: (() => void) | null = null;
  readonly #bySenderBatchId = new Map<string, string>();
  readonly #tokens = new Set<string>();
  readonly #signatures = new Map<string, { signature: string; eventId: string }>();
  readonly #script: ScriptedDisruption[] = [];
  readonly #hanging = new Set<() => void>();
  readonly #api = payoutsApi(this);
  #sequence = 0;
  #server: Deno.HttpServer | null = null;
  baseUrl = "";

  /** Answers the rail's calls in process (the rail's `paypalFetch`): no socket, nothing to close. */
  readonly fetch: typeof fetch = (input, init) => this.#handle(new Request(input, init));

  /** A server reached only through `fetch`, named by a loopback address it never listens on. */
  static inProcess(): PaypalContractServer {
    const server = new PaypalContractServer();
    server.baseUrl = "http://127.0.0.1:9";
    return server;
  }

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

  // The book: PayPal's state as this server keeps it (lib/paypal/payouts_api.ts).

  authenticate(clientId: string, clientSecret: string): Promise<string | null> {
    const known = clientId === this.clientId && clientSecret === this.clientSecret;
    return Promise.resolve(known ? clientId : null);
  }

  issueToken(): Promise<string> {
    const token = `A21AA${this.#next()}${crypto.randomUUID().replaceAll("-", "")}`;
    this.#tokens.add(token);
    this.tokensIssued++;
    return Promise.resolve(token);
  }

  accountOf(token: string): Promise<string | null> {
    return Promise.resolve(this.#tokens.has(token) ? this.clientId : null);
  }

  takeBatch(
    _account: string,
    senderBatchId: string,
    items: readonly ItemToTake[],
  ): Promise<{ payoutBatchId: string; taken: boolean }> {
    const original = this.#bySenderBatchId.get(senderBatchId);
    if (original !== undefined) return Promise.resolve({ payoutBatchId: original, taken: false });
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
        payout_item: item,
      });
    }
    this.batches.set(payoutBatchId, { senderBatchId, itemIds });
    this.afterTake?.();
    return Promise.resolve({ payoutBatchId, taken: true });
  }

  batch(_account: string, payoutBatchId: string) {
    const batch = this.batches.get(payoutBatchId);
    return Promise.resolve(
      batch
        ? {
          senderBatchId: batch.senderBatchId,
          items: batch.itemIds.map((id) => this.items.get(id)!),
          batchStatus: this.batchStatuses.get(payoutBatchId),
        }
        : null,
    );
  }

  item(_account: string, payoutItemId: string): Promise<ContractItem | null> {
    return Promise.resolve(this.items.get(payoutItemId) ?? null);
  }

  returnItem(_account: string, payoutItemId: string): Promise<ContractItem> {
    const item = this.items.get(payoutItemId)!;
    item.transaction_status = "RETURNED";
    return Promise.resolve(item);
  }

  verify(_account: string, body: WebhookSignature): Promise<boolean> {
    const signed = this.#signatures.get(body.transmission_id);
    return Promise.resolve(
      signed !== undefined && signed.signature === body.transmission_sig &&
        signed.eventId === body.webhook_event.id && body.webhook_id === this.webhookId,
    );
  }

  debugId(): string {
    return `dbg${this.#next().toLowerCase()}`;
  }

  #next(): string {
    this.#sequence++;
    return this.#sequence.toString(36).toUpperCase().padStart(6, "0");
  }

  #serverError(): Response {
    return Response.json({
      name: "INTERNAL_SERVER_ERROR",
      message: "An internal server error has occurred.",
      debug_id: this.debugId(),
    }, { status: 500 });
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
    const path = new URL(request.url).pathname;
    this.requests.push(`${request.method} ${path}`);
    const disruption = this.#disruptionFor(request.method, path);
    if (disruption === "5xx") {
      await request.body?.cancel();
      return this.#serverError();
    }
    if (disruption === "hang") return await this.#hang();
    const response = await this.#api(request);
    if (disruption === "take_then_5xx") {
      await response.body?.cancel();
      return this.#serverError();
    }
    if (disruption === "take_then_hang") return await this.#hang();
    return response;
  }
}
