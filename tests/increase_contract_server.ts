/**
 * A contract test server for Increase's API (instant deposit), written from Increase's API
 * reference and its official TypeScript SDK's types: a local HTTP server (127.0.0.1, a free port)
 * implementing GET /card_tokens/{id}/capabilities, POST and GET /card_validations, POST and GET
 * /card_push_transfers, GET /routing_numbers and POST and GET /real_time_payments_transfers (each
 * POST under `Idempotency-Key`: the same key and body answer the first
 * object, another body is 409 idempotency_key_already_used_error), with Increase's error body
 * ({status, type, title, detail}) and Bearer authentication. It is Increase's vault too: POST
 * /card_tokens takes `primary_account_number`, `expiration_month`, `expiration_year` and
 * `card_verification_value2` with the tokenization-only key and answers `{card_token}`, and GET
 * /card_tokens/{id} answers the Card Token object (id, last4, prefix, length, expiration_date)
 * with the API key. Beside them it plays the tokenization provider, whose page no Increase
 * reference publishes: GET /hosted/card is a hosted card page (the payee types the number, expiry
 * and CVV there; the form posts to this server, which forwards them to the vault as a provider's
 * proxy does and sends the browser back to `return_url` with `state` and `card_token_id`). A test scripts the
 * rest: a card's capabilities and validation answer, a push's status, a 5xx, a call that never
 * answers, a call taken before its answer is lost, and events signed as Increase signs them.
 */
import { increaseSignature } from "../lib/instant/client.ts";

interface TokenRecord {
  readonly id: string;
  readonly pan: string;
  /** ISO 8601 date: the last day of the card's expiry month. */
  readonly expirationDate: string;
  pushable: boolean;
  validation: "match" | "name_no_match" | "declined";
}

interface ContractValidation {
  readonly id: string;
  readonly card_token_id: string;
  status: string;
  readonly route: string;
  acceptance: Record<string, string> | null;
  decline: { reason: string } | null;
  readonly cardholder_first_name: string;
  readonly cardholder_last_name: string;
  readonly cardholder_postal_code: string;
}

export interface ContractPush {
  readonly id: string;
  status: string;
  readonly route: string;
  readonly card_token_id: string;
  readonly presentment_amount: { readonly currency: string; readonly value: string };
  readonly recipient_name: string;
  readonly idempotency_key: string | null;
  decline: { reason: string } | null;
}

/** A Real-Time Payments transfer as Increase reports it. */
export interface ContractRtpTransfer {
  readonly id: string;
  status: string;
  readonly amount: number;
  readonly account_number: string;
  readonly routing_number: string;
  readonly creditor_name: string;
  readonly source_account_number_id: string;
  readonly unstructured_remittance_information: string;
  readonly idempotency_key: string | null;
  rejection: { reject_reason_code: string } | null;
}

export type Disruption = "5xx" | "hang" | "take_then_hang";

export class IncreaseContractServer {
  readonly apiKey = "contract_increase_key_0001";
  /** The vault's key ("Card Tokenization Key"), which only creates card tokens. */
  readonly tokenizationKey = "contract_increase_tokenization_key_0001";
  readonly webhookSecret = "whsec_contract_increase_secret";
  readonly requests: string[] = [];
  readonly tokens = new Map<string, TokenRecord>();
  readonly validations = new Map<string, ContractValidation>();
  readonly pushes = new Map<string, ContractPush>();
  readonly rtpTransfers = new Map<string, ContractRtpTransfer>();
  /** Routing numbers whose bank takes Real-Time Payments; any other valid one does not. */
  readonly rtpBanks = new Set(["021000021", "011000015"]);
  /** Every body any request to this server carried, to show what the portal's browser sent. */
  readonly bodies: string[] = [];
  readonly #idempotency = new Map<string, { body: string; answer: unknown }>();
  readonly #script: { method: string; path: RegExp; disruption: Disruption }[] = [];
  readonly #hanging = new Set<() => void>();
  #sequence = 0;
  #server: Deno.HttpServer | null = null;
  baseUrl = "";

  static async start(): Promise<IncreaseContractServer> {
    const server = new IncreaseContractServer();
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
  settingsJson(): Record<string, unknown> {
    return {
      api_key: this.apiKey,
      base_url: this.baseUrl,
      webhook_secret: this.webhookSecret,
      account_id: "account_in71c4amph0vgo2qllky",
      source_account_number_id: "account_number_v18nkfqm6afpsrvy82b2",
      card_page_url: `${this.baseUrl}/hosted/card`,
      merchant: {
        name: "Acme Mutual",
        name_prefix: "ACME",
        category_code: "6300",
        address_line1: "1 Main Street",
        city: "Austin",
        state: "TX",
        postal_code: "73301",
      },
    };
  }

  /** A card token as the vault would make of a card number typed at the hosted page. */
  tokenize(pan: string, expiry = { month: 12, year: 2030 }): TokenRecord {
    const lastDay = new Date(Date.UTC(expiry.year, expiry.month, 0)).toISOString().slice(0, 10);
    const token: TokenRecord = {
      id: `outbound_card_token_${this.#next()}`,
      pan,
      expirationDate: lastDay,
      pushable: true,
      validation: "match",
    };
    this.tokens.set(token.id, token);
    return token;
  }

  disruptNext(method: string, path: RegExp, disruption: Disruption): void {
    this.#script.push({ method, path, disruption });
  }

  /** The pushes made to a card token (one per payment Increase would make). */
  pushesTo(cardTokenId: string): ContractPush[] {
    return [...this.pushes.values()].filter((p) => p.card_token_id === cardTokenId);
  }

  /** An event about a push, and the headers Increase signs it with (`secret`: forges it). */
  async signedEvent(
    push: ContractPush,
    options: { at: Date; secret?: string },
  ): Promise<{ body: string; headers: Record<string, string> }> {
    const body = JSON.stringify({
      id: `event_${this.#next()}`,
      associated_object_id: push.id,
      associated_object_type: "card_push_transfer",
      category: "card_push_transfer.updated",
      created_at: options.at.toISOString(),
      type: "event",
    });
    return {
      body,
      headers: {
        "content-type": "application/json",
        "Increase-Webhook-Signature": await increaseSignature(
          options.secret ?? this.webhookSecret,
          body,
          options.at,
        ),
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

  #error(status: number, type: string, detail: string): Response {
    return Response.json({ status, type, title: type.replaceAll("_", " "), detail }, { status });
  }

  #hang(): Promise<Response> {
    const { promise, resolve } = Promise.withResolvers<Response>();
    this.#hanging.add(() => resolve(this.#error(500, "internal_server_error", "shut down")));
    return promise;
  }

  async #handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    this.requests.push(`${request.method} ${url.pathname}`);
    const body = request.method === "POST" ? await request.text() : "";
    this.bodies.push(`${url.search} ${body}`);
    if (url.pathname === "/hosted/card") return await this.#hostedPage(request, url, body);
    if (url.pathname === "/card_tokens" && request.method === "POST") {
      return this.#vault(request.headers.get("authorization"), body);
    }
    if (request.headers.get("authorization") !== `Bearer ${this.apiKey}`) {
      return this.#error(401, "insufficient_permissions_error", "invalid API key");
    }
    const scripted = this.#script.findIndex((s) =>
      s.method === request.method && s.path.test(url.pathname)
    );
    const disruption = scripted >= 0 ? this.#script.splice(scripted, 1)[0].disruption : null;
    if (disruption === "hang") return await this.#hang();
    if (disruption === "5xx") return this.#error(500, "internal_server_error", "try again");
    const answer = this.#route(request.method, url.pathname, body, request.headers, url.search);
    return disruption === "take_then_hang" ? await this.#hang() : answer;
  }

  #route(
    method: string,
    path: string,
    body: string,
    headers: Headers,
    query: string,
  ): Response {
    const cardToken = /^\/card_tokens\/([^/]+)$/.exec(path);
    if (method === "GET" && cardToken) {
      const token = this.tokens.get(decodeURIComponent(cardToken[1]));
      if (!token) return this.#error(404, "object_not_found_error", "no such card token");
      return Response.json({
        id: token.id,
        created_at: new Date().toISOString(),
        expiration_date: token.expirationDate,
        last4: token.pan.slice(-4),
        length: token.pan.length,
        prefix: token.pan.slice(0, 8),
        type: "card_token",
      });
    }
    const capabilities = /^\/card_tokens\/([^/]+)\/capabilities$/.exec(path);
    if (method === "GET" && capabilities) {
      const token = this.tokens.get(capabilities[1]);
      if (!token) return this.#error(404, "object_not_found_error", "no such card token");
      const support = token.pushable ? "supported" : "not_supported";
      return Response.json({
        routes: [
          {
            route: "visa",
            domestic_push_transfers: support,
            cross_border_push_transfers: "not_supported",
          },
          {
            route: "mastercard",
            domestic_push_transfers: "not_supported",
            cross_border_push_transfers: "not_supported",
          },
        ],
        type: "card_token_capabilities",
      });
    }
    if (method === "GET" && path === "/routing_numbers") {
      const routing = new URLSearchParams(query).get("routing_number") ?? "";
      const known = /^\d{9}$/.test(routing);
      return Response.json({
        data: known
          ? [{
            name: `Bank ${routing}`,
            routing_number: routing,
            ach_transfers: "supported",
            fednow_transfers: "not_supported",
            real_time_payments_transfers: this.rtpBanks.has(routing)
              ? "supported"
              : "not_supported",
            wire_transfers: "supported",
            type: "routing_number",
          }]
          : [],
        next_cursor: null,
      });
    }
    const creates = ["/card_validations", "/card_push_transfers", "/real_time_payments_transfers"];
    if (method === "POST" && creates.includes(path)) {
      const key = headers.get("idempotency-key");
      if (key !== null) {
        const before = this.#idempotency.get(`${path} ${key}`);
        if (before) {
          return before.body === body ? Response.json(before.answer) : this.#error(
            409,
            "idempotency_key_already_used_error",
            `key ${key} was used for another request`,
          );
        }
      }
      const made = path === "/card_validations"
        ? this.#validate(JSON.parse(body), key)
        : path === "/card_push_transfers"
        ? this.#push(JSON.parse(body), key)
        : this.#sendRtp(JSON.parse(body), key);
      if (made instanceof Response) return made;
      if (key !== null) this.#idempotency.set(`${path} ${key}`, { body, answer: made });
      return Response.json(made);
    }
    const read = /^\/(card_validations|card_push_transfers|real_time_payments_transfers)\/([^/]+)$/
      .exec(path);
    if (method === "GET" && read) {
      const found = read[1] === "card_validations"
        ? this.validations.get(read[2])
        : read[1] === "card_push_transfers"
        ? this.pushes.get(read[2])
        : this.rtpTransfers.get(read[2]);
      return found
        ? Response.json(found)
        : this.#error(404, "object_not_found_error", `no ${read[2]}`);
    }
    return this.#error(404, "not_found_error", `no route ${method} ${path}`);
  }

  #sendRtp(params: Record<string, unknown>, key: string | null): ContractRtpTransfer | Response {
    const amount = params.amount;
    if (typeof amount !== "number" || !Number.isInteger(amount) || amount <= 0) {
      return this.#error(400, "invalid_parameters_error", "amount must be positive cents");
    }
    const transfer: ContractRtpTransfer = {
      id: `real_time_payments_transfer_${this.#next()}`,
      status: "pending_submission",
      amount,
      account_number: String(params.account_number),
      routing_number: String(params.routing_number),
      creditor_name: String(params.creditor_name),
      source_account_number_id: String(params.source_account_number_id),
      unstructured_remittance_information: String(params.unstructured_remittance_information),
      idempotency_key: key,
      rejection: null,
    };
    this.rtpTransfers.set(transfer.id, transfer);
    return transfer;
  }

  /** An event about a Real-Time Payments transfer, signed as Increase signs it. */
  async signedRtpEvent(
    transfer: ContractRtpTransfer,
    at: Date,
  ): Promise<{ body: string; headers: Record<string, string> }> {
    const body = JSON.stringify({
      id: `event_${this.#next()}`,
      associated_object_id: transfer.id,
      associated_object_type: "real_time_payments_transfer",
      category: "real_time_payments_transfer.updated",
      created_at: at.toISOString(),
      type: "event",
    });
    return {
      body,
      headers: {
        "content-type": "application/json",
        "Increase-Webhook-Signature": await increaseSignature(this.webhookSecret, body, at),
      },
    };
  }

  #validate(params: Record<string, string>, key: string | null): ContractValidation | Response {
    const token = this.tokens.get(params.card_token_id);
    if (!token) {
      return this.#error(400, "invalid_parameters_error", "card_token_id is not a card token");
    }
    const validation: ContractValidation = {
      id: `outbound_card_validation_${this.#next()}`,
      card_token_id: token.id,
      status: token.validation === "declined" ? "declined" : "complete",
      route: "visa",
      acceptance: token.validation === "declined" ? null : {
        cardholder_full_name_result: token.validation === "name_no_match" ? "no_match" : "match",
        cardholder_postal_code_result: "match",
      },
      decline: token.validation === "declined" ? { reason: "do_not_honor" } : null,
      cardholder_first_name: params.cardholder_first_name,
      cardholder_last_name: params.cardholder_last_name,
      cardholder_postal_code: params.cardholder_postal_code,
      ...(key ? { idempotency_key: key } : {}),
    };
    this.validations.set(validation.id, validation);
    return validation;
  }

  #push(params: Record<string, unknown>, key: string | null): ContractPush | Response {
    const token = this.tokens.get(String(params.card_token_id));
    if (!token) {
      return this.#error(400, "invalid_parameters_error", "card_token_id is not a card token");
    }
    if (params.business_application_identifier !== "funds_disbursement") {
      return this.#error(400, "invalid_parameters_error", "business_application_identifier");
    }
    const push: ContractPush = {
      id: `outbound_card_push_transfer_${this.#next()}`,
      status: "pending_submission",
      route: "visa",
      card_token_id: token.id,
      presentment_amount: params.presentment_amount as ContractPush["presentment_amount"],
      recipient_name: String(params.recipient_name),
      idempotency_key: key,
      decline: null,
    };
    this.pushes.set(push.id, push);
    return push;
  }

  /**
   * Increase's vault: a card number, its expiry and CVV2 with the tokenization key make a card
   * token (`{card_token}`); a field missing or malformed is 400 invalid_parameters_error naming it.
   */
  #vault(authorization: string | null, body: string): Response {
    if (authorization !== `Bearer ${this.tokenizationKey}`) {
      return this.#error(401, "insufficient_permissions_error", "invalid card tokenization key");
    }
    let params: Record<string, unknown>;
    try {
      params = JSON.parse(body);
    } catch {
      return this.#error(400, "malformed_request_error", "the body is not JSON");
    }
    const invalid = (field: string, rule: string) =>
      this.#error(400, "invalid_parameters_error", `${field}: ${rule}`);
    const pan = params.primary_account_number;
    if (typeof pan !== "string" || !/^\d{12,19}$/.test(pan)) {
      return invalid("primary_account_number", "must be 12 to 19 digits");
    }
    const month = params.expiration_month;
    if (typeof month !== "number" || !Number.isInteger(month) || month < 1 || month > 12) {
      return invalid("expiration_month", "must be an integer from 1 to 12");
    }
    const year = params.expiration_year;
    if (typeof year !== "number" || !Number.isInteger(year) || year < 2000 || year > 2099) {
      return invalid("expiration_year", "must be a four-digit year");
    }
    const cvv = params.card_verification_value2;
    if (typeof cvv !== "string" || !/^\d{3,4}$/.test(cvv)) {
      return invalid("card_verification_value2", "must be 3 or 4 digits");
    }
    return Response.json({ card_token: this.tokenize(pan, { month, year }).id });
  }

  /**
   * The hosted card page: a form (GET) whose submission (POST) the provider forwards to the vault
   * (number, expiry MM/YY and CVV as the vault's fields), sending the browser back with the token.
   */
  async #hostedPage(request: Request, url: URL, body: string): Promise<Response> {
    const escape = (s: string) =>
      s.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;");
    const page = (returnUrl: string, state: string, problem: string | null, status: number) =>
      new Response(
        `<!doctype html><html><body><h1>Card partner</h1>` +
          (problem ? `<p class="error">${escape(problem)}</p>` : "") +
          `<form method="post" action="/hosted/card">` +
          `<input type="hidden" name="return_url" value="${escape(returnUrl)}">` +
          `<input type="hidden" name="state" value="${escape(state)}">` +
          `<label for="pan">Card number</label><input id="pan" name="pan" autocomplete="cc-number">` +
          `<label for="exp">Expiry</label><input id="exp" name="exp">` +
          `<label for="cvv">CVV</label><input id="cvv" name="cvv">` +
          `<button type="submit">Save card</button></form></body></html>`,
        { status, headers: { "content-type": "text/html; charset=utf-8" } },
      );
    if (request.method === "GET") {
      return page(
        url.searchParams.get("return_url") ?? "",
        url.searchParams.get("state") ?? "",
        null,
        200,
      );
    }
    const form = new URLSearchParams(body);
    const returnUrl = form.get("return_url") ?? "";
    const state = form.get("state") ?? "";
    const [month, year] = (form.get("exp") ?? "").split("/").map((part) => Number(part.trim()));
    const answer = this.#vault(
      `Bearer ${this.tokenizationKey}`,
      JSON.stringify({
        primary_account_number: (form.get("pan") ?? "").replace(/\D/g, ""),
        expiration_month: month,
        expiration_year: year < 100 ? 2000 + year : year,
        card_verification_value2: (form.get("cvv") ?? "").trim(),
      }),
    );
    const vaulted = await answer.json();
    if (!answer.ok) return page(returnUrl, state, String(vaulted.detail), 422);
    const back = new URL(returnUrl);
    back.searchParams.set("state", state);
    back.searchParams.set("card_token_id", String(vaulted.card_token));
    return Response.redirect(back.href, 303);
  }
}
