/**
 * Lithic's API as the virtual card rail calls it, simulated from Lithic's API reference and the
 * official SDK's types (npm `lithic`): POST /v1/cards (a repeated Idempotency-Key answers its first
 * card, the same key with another body is refused 422), GET and PATCH /v1/cards/{card_token} (a
 * closed card stays closed), GET /v1/transactions?card_token=, GET and POST /v2/auth_rules, and the
 * hosted card page GET /v1/embed/card?embed_request=&hmac= (only an embed request the account's
 * API key signed, before its expiration, shows the card). Errors have Lithic's body ({message,
 * debugging_request_id}); a request whose `Authorization` names no account is 401.
 *
 * It is a `fetch` handler over a store, so one simulation serves two masters: the sandbox's Lithic
 * (lib/cards/sandbox_lithic.ts, its cards in the test database, reached through an injected
 * `fetch`, no socket) and the contract test server (tests/lithic_contract_server.ts, in memory,
 * behind a loopback port with the disruptions a test scripts).
 */

/** A card as Lithic reports it (Card's fields the rail reads, and a few more). */
export interface SimulatedCard {
  readonly token: string;
  /** The account (API key) that issued it: a company in the sandbox. */
  readonly account_token: string;
  readonly created: string;
  readonly type: string;
  readonly state: "OPEN" | "PAUSED" | "CLOSED";
  readonly last_four: string;
  readonly spend_limit: number;
  readonly spend_limit_duration: string;
  readonly memo: string;
  readonly exp_month: string;
  readonly exp_year: string;
  readonly funding: { readonly type: string; readonly state: string };
}

/** A card's transaction as Lithic reports it. */
export interface SimulatedTransaction {
  readonly token: string;
  readonly card_token: string;
  readonly status: "PENDING" | "SETTLED" | "VOIDED" | "DECLINED" | "EXPIRED";
  readonly amount: number;
  readonly settled_amount: number;
  readonly created: string;
}

/** A card-level auth rule as Lithic reports it. */
export interface SimulatedAuthRule {
  readonly token: string;
  readonly card_tokens: readonly string[];
  readonly parameters: unknown;
}

/** Where a simulation keeps Lithic's side: cards, their transactions and rules, idempotency keys. */
export interface LithicSimulatorStore {
  /** The request body and the answer of the first card created under `key` by `account`. */
  createdUnder(
    account: string,
    key: string,
  ): Promise<{ readonly request: string; readonly answer: SimulatedCard } | null>;
  /**
   * Keeps a new card (and its answer under `key`); when another card took the key first, keeps
   * nothing and returns that one's answer.
   */
  addCard(card: SimulatedCard, key: string | null, request: string): Promise<SimulatedCard>;
  card(token: string): Promise<SimulatedCard | null>;
  setState(token: string, state: SimulatedCard["state"]): Promise<void>;
  /** The account's transactions, of one card when `cardToken` is given. */
  transactions(account: string, cardToken: string | null): Promise<SimulatedTransaction[]>;
  /** Keeps a transaction, or replaces the one of the same token. */
  putTransaction(transaction: SimulatedTransaction): Promise<void>;
  authRules(account: string, cardToken: string | null): Promise<SimulatedAuthRule[]>;
  addAuthRule(account: string, rule: SimulatedAuthRule): Promise<void>;
}

/** How a simulation answers beyond the store: its accounts, its clock, what it refuses. */
export interface LithicSimulatorOptions {
  readonly store: LithicSimulatorStore;
  /** The account an `Authorization` header opens, or null. */
  accountOf(apiKey: string): string | null;
  /** The API key of an account (it signs the account's embed requests). */
  apiKeyOf(account: string): string;
  /** Lithic's time for an account's records (card and transaction `created`). */
  now(account: string): Promise<number>;
  /** Real time, which judges an embed request's expiration (the time it was signed on). */
  realNow(): number;
  /** Why a card is refused (a 4xx Lithic answers), or null to issue it. */
  refusal?(account: string, params: Record<string, unknown>): Promise<LithicRefusal | null>;
  /** Called with each card just issued (the sandbox plans its payee's purchase). */
  issued?(card: SimulatedCard): Promise<void>;
  /**
   * Called with a card whose state a request changed, and its state before (the sandbox sends
   * Lithic's `card.updated` webhook).
   */
  updated?(card: SimulatedCard, previousState: SimulatedCard["state"]): Promise<void>;
  /** Each embed page served, with the card it showed. */
  embedded?(card: SimulatedCard): void;
}

export interface LithicRefusal {
  readonly status: number;
  readonly message: string;
}

/** The body of each Lithic error. */
export function lithicError(status: number, message: string): Response {
  return Response.json({ message, debugging_request_id: crypto.randomUUID() }, { status });
}

/**
 * The simulated card's full number and CVV, derived from its token (FNV-1a digits with a Luhn check
 * digit): they are shown only on the embed page, never kept, and never part of a card's answer.
 */
export function simulatedCardNumbers(token: string): { pan: string; cvv: string } {
  let hash = 0x811c9dc5;
  const digits: number[] = [];
  for (let round = 0; digits.length < 14; round++) {
    for (const char of `${round}:${token}`) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193);
    digits.push(...String(hash >>> 0).slice(-3).split("").map(Number));
  }
  const body = [4, 1, 1, 1, ...digits.slice(0, 11)];
  // Luhn: from the right of the body, every other digit doubled.
  const sum = [...body].reverse().reduce((total, digit, i) => {
    const doubled = i % 2 === 0 ? digit * 2 : digit;
    return total + (doubled > 9 ? doubled - 9 : doubled);
  }, 0);
  return { pan: `${body.join("")}${(10 - sum % 10) % 10}`, cvv: digits.slice(11, 14).join("") };
}

/**
 * A purchase on a card: authorized (PENDING) or settled. A single-use card closes at its first
 * one (Lithic's Card.type: "SINGLE_USE - Card is closed upon first successful authorization");
 * `closed` says this purchase closed it. The same `token` again is the same purchase.
 */
export async function spendOnCard(
  store: LithicSimulatorStore,
  card: SimulatedCard,
  purchase: {
    readonly cents: number;
    readonly status: "PENDING" | "SETTLED";
    readonly at: number;
    readonly token?: string;
  },
): Promise<{ readonly transaction: SimulatedTransaction; readonly closed: boolean }> {
  const transaction: SimulatedTransaction = {
    token: purchase.token ?? crypto.randomUUID(),
    card_token: card.token,
    status: purchase.status,
    amount: purchase.cents,
    settled_amount: purchase.status === "SETTLED" ? purchase.cents : 0,
    created: new Date(purchase.at).toISOString(),
  };
  await store.putTransaction(transaction);
  const closed = card.type === "SINGLE_USE" && card.state !== "CLOSED";
  if (closed) await store.setState(card.token, "CLOSED");
  return { transaction, closed };
}

/** The simulation as a `fetch` handler. */
export function lithicSimulator(
  options: LithicSimulatorOptions,
): (request: Request) => Promise<Response> {
  const { store } = options;

  async function createCard(
    account: string,
    body: string,
    key: string | null,
  ): Promise<Response> {
    if (key !== null) {
      const before = await store.createdUnder(account, key);
      if (before && before.request !== body) {
        return lithicError(422, `Idempotency-Key ${key} was used with a different request`);
      }
      if (before) return Response.json(before.answer);
    }
    let params: Record<string, unknown>;
    try {
      params = JSON.parse(body);
    } catch {
      return lithicError(400, "The request body is not JSON");
    }
    if (typeof params.type !== "string") return lithicError(400, "type is required");
    const refused = await options.refusal?.(account, params);
    if (refused) return lithicError(refused.status, refused.message);
    const token = crypto.randomUUID();
    const card = await store.addCard(
      {
        token,
        account_token: account,
        created: new Date(await options.now(account)).toISOString(),
        type: params.type,
        state: params.state === "PAUSED" ? "PAUSED" : "OPEN",
        last_four: simulatedCardNumbers(token).pan.slice(-4),
        spend_limit: Number(params.spend_limit ?? 0),
        spend_limit_duration: String(params.spend_limit_duration ?? "TRANSACTION"),
        memo: String(params.memo ?? ""),
        exp_month: String(params.exp_month ?? "12"),
        exp_year: String(params.exp_year ?? "2030"),
        funding: { type: "DEPOSITORY_CHECKING", state: "ENABLED" },
      },
      key,
      body,
    );
    // Another request took the key first: its card is the answer, and it was issued already.
    if (card.token === token) await options.issued?.(card);
    return Response.json(card);
  }

  async function cardRoute(
    request: Request,
    account: string,
    token: string,
  ): Promise<Response> {
    const card = await store.card(token);
    if (!card || card.account_token !== account) return lithicError(404, `Card ${token} not found`);
    if (request.method === "GET") return Response.json(card);
    const patch = await request.json() as { state?: string };
    if (card.state === "CLOSED" && patch.state && patch.state !== "CLOSED") {
      return lithicError(400, "A closed card cannot be reopened");
    }
    if (patch.state === "CLOSED" || patch.state === "OPEN" || patch.state === "PAUSED") {
      await store.setState(token, patch.state);
    }
    const updated = (await store.card(token))!;
    if (updated.state !== card.state) await options.updated?.(updated, card.state);
    return Response.json(updated);
  }

  /** The hosted card page: shows the card's number only to an embed request its account signed. */
  async function embed(url: URL): Promise<Response> {
    let json: string;
    let params: { token?: string; expiration?: string };
    try {
      json = atob(url.searchParams.get("embed_request") ?? "");
      params = JSON.parse(json);
    } catch {
      return lithicError(400, "embed_request is not a base64 JSON embed request");
    }
    const card = typeof params.token === "string" ? await store.card(params.token) : null;
    if (!card) return lithicError(404, `Card ${params.token} not found`);
    const key = await crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(options.apiKeyOf(card.account_token)),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const expected = btoa(String.fromCharCode(
      ...new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(json))),
    ));
    if (expected !== (url.searchParams.get("hmac") ?? "")) {
      return lithicError(401, "The embed request's hmac does not match");
    }
    if (params.expiration && Date.parse(params.expiration) < options.realNow()) {
      return lithicError(401, "The embed request expired");
    }
    options.embedded?.(card);
    const numbers = simulatedCardNumbers(card.token);
    const pan = numbers.pan.replace(/(\d{4})(?=\d)/g, "$1 ");
    return new Response(
      `<!doctype html><html><body><div id="card"><span id="pan">${pan}</span>` +
        `<span id="expiry">${card.exp_month}/${card.exp_year.slice(-2)}</span>` +
        `<span id="cvv">${numbers.cvv}</span></div></body></html>`,
      { headers: { "content-type": "text/html; charset=utf-8" } },
    );
  }

  return async (request) => {
    const url = new URL(request.url);
    // The simulation may sit under a path prefix (the sandbox's is /rails/lithic/sandbox).
    const path = url.pathname.replace(/^.*?(?=\/v[12]\/)/, "");
    if (path === "/v1/embed/card" && request.method === "GET") return await embed(url);
    const account = options.accountOf(request.headers.get("authorization") ?? "");
    if (account === null) return lithicError(401, "Please provide API key in Authorization header");
    const cardPath = /^\/v1\/cards\/([^/]+)$/.exec(path);
    if (request.method === "POST" && path === "/v1/cards") {
      return await createCard(
        account,
        await request.text(),
        request.headers.get("idempotency-key"),
      );
    }
    if (cardPath && (request.method === "GET" || request.method === "PATCH")) {
      return await cardRoute(request, account, cardPath[1]);
    }
    const cardToken = url.searchParams.get("card_token");
    if (request.method === "GET" && path === "/v1/transactions") {
      return Response.json({
        data: await store.transactions(account, cardToken),
        has_more: false,
      });
    }
    if (path === "/v2/auth_rules" && request.method === "GET") {
      return Response.json({ data: await store.authRules(account, cardToken), has_more: false });
    }
    if (path === "/v2/auth_rules" && request.method === "POST") {
      const body = await request.json() as { card_tokens: string[]; parameters: unknown };
      const rule = { token: crypto.randomUUID(), ...body };
      await store.addAuthRule(account, rule);
      return Response.json({ ...rule, state: "ACTIVE" });
    }
    return lithicError(404, `no route ${request.method} ${url.pathname}`);
  };
}
