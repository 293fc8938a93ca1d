/**
 * A contract test server for Lithic's API, written from its API reference and the official SDK's
 * types (npm `lithic`): a local HTTP server (127.0.0.1, a free port) implementing what the virtual
 * card rail calls — POST /v1/cards (with the Idempotency-Key header), GET and PATCH
 * /v1/cards/{card_token}, GET /v1/transactions?card_token=, GET and POST /v2/auth_rules — and the
 * hosted card page, GET /v1/embed/card?embed_request=&hmac=, which checks the HMAC-SHA256 of the
 * embed request with the API key and shows the card's number and CVV (only the payee's browser
 * loads it). Errors have Lithic's body ({message, debugging_request_id}); a request without the
 * API key in `Authorization` is 401. Like Lithic, a repeated Idempotency-Key answers the first
 * card, and the same key with another body is refused (422). A test scripts the rest: a refused
 * card, a 5xx, a call that never answers, a card taken before the answer is lost, spending on a
 * card, and webhooks signed as Lithic signs them (Standard Webhooks).
 */
import { Webhook } from "standardwebhooks";

/** A card as Lithic reports it (NonPCICard's fields the rail reads, and a few more). */
export interface ContractCard {
  readonly token: string;
  readonly account_token: string;
  readonly created: string;
  readonly type: string;
  state: "OPEN" | "PAUSED" | "CLOSED";
  readonly last_four: string;
  readonly spend_limit: number;
  readonly spend_limit_duration: string;
  readonly memo: string;
  readonly exp_month: string;
  readonly exp_year: string;
  readonly funding: { readonly type: string; readonly state: string };
  readonly pan_hidden: string;
  readonly cvv_hidden: string;
}

interface ContractTransaction {
  readonly token: string;
  readonly card_token: string;
  status: "PENDING" | "SETTLED" | "VOIDED" | "DECLINED" | "EXPIRED";
  readonly amount: number;
  settled_amount: number;
  readonly created: string;
}

/** What the next matching call gets instead of its normal answer. */
export type Disruption = "5xx" | "hang" | "take_then_hang" | { status: number; message: string };

export class LithicContractServer {
  readonly apiKey = "contract_lithic_key_0001";
  readonly webhookSecret = `whsec_${btoa("contract lithic webhook secret!!")}`;
  /** Every request, in order: `METHOD /path`. */
  readonly requests: string[] = [];
  readonly cards = new Map<string, ContractCard>();
  readonly transactions: ContractTransaction[] = [];
  readonly authRules: { token: string; card_tokens: string[]; parameters: unknown }[] = [];
  /** Lithic's clock, which judges an embed request's expiration (a test may give its fake clock). */
  now: () => number = Date.now;
  /** Embed pages served, with the card they showed. */
  readonly embedsServed: string[] = [];
  readonly #idempotency = new Map<string, { body: string; card: ContractCard }>();
  readonly #script: { method: string; path: RegExp; disruption: Disruption }[] = [];
  readonly #hanging = new Set<() => void>();
  #sequence = 0;
  #server: Deno.HttpServer | null = null;
  baseUrl = "";

  static async start(): Promise<LithicContractServer> {
    const server = new LithicContractServer();
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
  settingsJson(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      api_key: this.apiKey,
      base_url: this.baseUrl,
      webhook_secret: this.webhookSecret,
      ...extra,
    };
  }

  /** The next `method` call to a path `path` matches is disrupted. */
  disruptNext(method: string, path: RegExp, disruption: Disruption): void {
    this.#script.push({ method, path, disruption });
  }

  /** The cards whose memo is `reference` (one per card Lithic would have issued). */
  cardsOf(reference: string): ContractCard[] {
    return [...this.cards.values()].filter((card) => card.memo === reference);
  }

  /** The card's full number, as only Lithic and its holder see it. */
  panOf(card: ContractCard): string {
    return card.pan_hidden;
  }

  /** A purchase on the card: authorized (PENDING), or settled; a single-use card closes when it settles. */
  spend(cardToken: string, cents: number, status: "PENDING" | "SETTLED"): void {
    const card = this.cards.get(cardToken)!;
    this.transactions.push({
      token: crypto.randomUUID(),
      card_token: cardToken,
      status,
      amount: cents,
      settled_amount: status === "SETTLED" ? cents : 0,
      created: new Date().toISOString(),
    });
    if (status === "SETTLED" && card.type === "SINGLE_USE") card.state = "CLOSED";
  }

  /** Settles the card's pending transactions. */
  settleAll(cardToken: string): void {
    for (const t of this.transactions.filter((t) => t.card_token === cardToken)) {
      if (t.status !== "PENDING") continue;
      t.status = "SETTLED";
      t.settled_amount = t.amount;
    }
    const card = this.cards.get(cardToken)!;
    if (card.type === "SINGLE_USE") card.state = "CLOSED";
  }

  /** A webhook event and the headers Lithic signs it with (`secret`: another secret forges it). */
  signedWebhook(
    event: Record<string, unknown>,
    options: { secret?: string; at?: Date } = {},
  ): { body: string; headers: Record<string, string> } {
    const id = `msg_${this.#next()}`;
    const at = options.at ?? new Date();
    const body = JSON.stringify(event);
    const signature = new Webhook(options.secret ?? this.webhookSecret).sign(id, at, body);
    return {
      body,
      headers: {
        "content-type": "application/json",
        "webhook-id": id,
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": signature,
      },
    };
  }

  async close(): Promise<void> {
    for (const release of this.#hanging) release();
    await this.#server?.shutdown();
  }

  #next(): number {
    return ++this.#sequence;
  }

  #error(status: number, message: string): Response {
    return Response.json({ message, debugging_request_id: crypto.randomUUID() }, { status });
  }

  #hang(): Promise<Response> {
    const { promise, resolve } = Promise.withResolvers<Response>();
    const release = () => resolve(this.#error(500, "contract server shut down"));
    this.#hanging.add(release);
    return promise;
  }

  async #handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    this.requests.push(`${request.method} ${url.pathname}`);
    if (url.pathname === "/v1/embed/card") return await this.#embed(url);
    if (request.headers.get("authorization") !== this.apiKey) {
      return this.#error(401, "Please provide API key in Authorization header");
    }
    const scripted = this.#script.findIndex((s) =>
      s.method === request.method && s.path.test(url.pathname)
    );
    const disruption = scripted >= 0 ? this.#script.splice(scripted, 1)[0].disruption : null;
    if (disruption === "hang") return await this.#hang();
    if (disruption === "5xx") return this.#error(500, "Internal server error");
    if (typeof disruption === "object" && disruption !== null) {
      return this.#error(disruption.status, disruption.message);
    }
    const answer = await this.#route(request, url);
    return disruption === "take_then_hang" ? await this.#hang() : answer;
  }

  async #route(request: Request, url: URL): Promise<Response> {
    const cardPath = /^\/v1\/cards\/([^/]+)$/.exec(url.pathname);
    if (request.method === "POST" && url.pathname === "/v1/cards") {
      return this.#createCard(await request.text(), request.headers.get("idempotency-key"));
    }
    if (cardPath && (request.method === "GET" || request.method === "PATCH")) {
      const card = this.cards.get(cardPath[1]);
      if (!card) return this.#error(404, `Card ${cardPath[1]} not found`);
      if (request.method === "PATCH") {
        const patch = await request.json() as { state?: string };
        if (card.state === "CLOSED" && patch.state && patch.state !== "CLOSED") {
          return this.#error(400, "A closed card cannot be reopened");
        }
        if (patch.state === "CLOSED" || patch.state === "OPEN" || patch.state === "PAUSED") {
          card.state = patch.state;
        }
      }
      return Response.json(card);
    }
    if (request.method === "GET" && url.pathname === "/v1/transactions") {
      const token = url.searchParams.get("card_token");
      return Response.json({
        data: this.transactions.filter((t) => token === null || t.card_token === token),
        has_more: false,
      });
    }
    if (url.pathname === "/v2/auth_rules" && request.method === "GET") {
      const token = url.searchParams.get("card_token");
      return Response.json({
        data: this.authRules.filter((r) => token === null || r.card_tokens.includes(token)),
        has_more: false,
      });
    }
    if (url.pathname === "/v2/auth_rules" && request.method === "POST") {
      const body = await request.json() as { card_tokens: string[]; parameters: unknown };
      const rule = { token: crypto.randomUUID(), ...body };
      this.authRules.push(rule);
      return Response.json({ ...rule, state: "ACTIVE" });
    }
    return this.#error(404, `no route ${request.method} ${url.pathname}`);
  }

  #createCard(body: string, idempotencyKey: string | null): Response {
    if (idempotencyKey !== null) {
      const before = this.#idempotency.get(idempotencyKey);
      if (before) {
        if (before.body !== body) {
          return this.#error(
            422,
            `Idempotency-Key ${idempotencyKey} was used with a different request`,
          );
        }
        return Response.json(before.card);
      }
    }
    const params = JSON.parse(body) as Record<string, unknown>;
    if (typeof params.type !== "string") return this.#error(400, "type is required");
    const pan = `4111110${String(1_000_000_000 + this.#next()).slice(-9)}`;
    const card: ContractCard = {
      token: crypto.randomUUID(),
      account_token: "contract-account",
      created: new Date().toISOString(),
      type: params.type,
      state: params.state === "PAUSED" ? "PAUSED" : "OPEN",
      last_four: pan.slice(-4),
      spend_limit: Number(params.spend_limit ?? 0),
      spend_limit_duration: String(params.spend_limit_duration ?? "TRANSACTION"),
      memo: String(params.memo ?? ""),
      exp_month: String(params.exp_month ?? "12"),
      exp_year: String(params.exp_year ?? "2030"),
      funding: { type: "DEPOSITORY_CHECKING", state: "ENABLED" },
      pan_hidden: pan,
      cvv_hidden: String(100 + (this.#sequence % 900)),
    };
    this.cards.set(card.token, card);
    if (idempotencyKey !== null) this.#idempotency.set(idempotencyKey, { body, card });
    return Response.json(card);
  }

  /** The hosted card page: only a request the API key signed, before its expiration, shows a card. */
  async #embed(url: URL): Promise<Response> {
    const embedRequest = url.searchParams.get("embed_request") ?? "";
    const hmac = url.searchParams.get("hmac") ?? "";
    let json: string;
    try {
      json = atob(embedRequest);
    } catch {
      return this.#error(400, "embed_request is not base64");
    }
    const key = await crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(this.apiKey),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const expected = btoa(String.fromCharCode(
      ...new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(json))),
    ));
    if (expected !== hmac) return this.#error(401, "The embed request's hmac does not match");
    const params = JSON.parse(json) as { token: string; expiration?: string };
    if (params.expiration && Date.parse(params.expiration) < this.now()) {
      return this.#error(401, "The embed request expired");
    }
    const card = this.cards.get(params.token);
    if (!card) return this.#error(404, `Card ${params.token} not found`);
    this.embedsServed.push(card.token);
    const pan = card.pan_hidden.replace(/(\d{4})(?=\d)/g, "$1 ");
    return new Response(
      `<!doctype html><html><body><div id="card"><span id="pan">${pan}</span>` +
        `<span id="expiry">${card.exp_month}/${card.exp_year.slice(-2)}</span>` +
        `<span id="cvv">${card.cvv_hidden}</span></div></body></html>`,
      { headers: { "content-type": "text/html; charset=utf-8" } },
    );
  }
}
