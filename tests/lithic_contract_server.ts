/**
 * A contract test server for Lithic's API: a local HTTP server (127.0.0.1, a free port) serving the
 * simulation of Lithic's published API that the sandbox's Lithic runs on too (lib/cards/simulator.ts:
 * cards with the Idempotency-Key header, transactions, auth rules, the hosted card page), here over
 * an in-memory store with one account and its API key. The simulation is written from Lithic's API
 * reference and the official SDK's types, not from the rail, so the rail's tests still check it
 * against Lithic's contract; what only a test needs stays here. A test scripts the rest: a refused
 * card, a 5xx, a call that never answers, a card taken before the answer is lost, spending on a
 * card, and webhooks signed as Lithic signs them (Standard Webhooks).
 */
import { Webhook } from "standardwebhooks";
import {
  lithicError,
  lithicSimulator,
  type LithicSimulatorStore,
  type SimulatedAuthRule,
  type SimulatedCard,
  simulatedCardNumbers,
  type SimulatedTransaction,
  spendOnCard,
} from "../lib/cards/simulator.ts";

/** A card as Lithic reports it. */
export type ContractCard = SimulatedCard;

/** What the next matching call gets instead of its normal answer. */
export type Disruption = "5xx" | "hang" | "take_then_hang" | { status: number; message: string };

const ACCOUNT = "contract-account";

/** Lithic's side in memory, which the tests read. */
class MemoryStore implements LithicSimulatorStore {
  readonly cards = new Map<string, SimulatedCard>();
  readonly purchases: SimulatedTransaction[] = [];
  readonly rules: SimulatedAuthRule[] = [];
  readonly #answers = new Map<string, { request: string; answer: SimulatedCard }>();

  createdUnder(_account: string, key: string) {
    return Promise.resolve(this.#answers.get(key) ?? null);
  }
  addCard(card: SimulatedCard, key: string | null, request: string) {
    const before = key === null ? undefined : this.#answers.get(key);
    if (before) return Promise.resolve(before.answer);
    this.cards.set(card.token, card);
    if (key !== null) this.#answers.set(key, { request, answer: card });
    return Promise.resolve(card);
  }
  card(token: string) {
    return Promise.resolve(this.cards.get(token) ?? null);
  }
  setState(token: string, state: SimulatedCard["state"]) {
    this.cards.set(token, { ...this.cards.get(token)!, state });
    return Promise.resolve();
  }
  transactions(_account: string, cardToken: string | null) {
    return Promise.resolve(
      this.purchases.filter((t) => cardToken === null || t.card_token === cardToken),
    );
  }
  putTransaction(transaction: SimulatedTransaction) {
    const at = this.purchases.findIndex((t) => t.token === transaction.token);
    if (at >= 0) this.purchases[at] = transaction;
    else this.purchases.push(transaction);
    return Promise.resolve();
  }
  authRules(_account: string, cardToken: string | null) {
    return Promise.resolve(
      this.rules.filter((r) => cardToken === null || r.card_tokens.includes(cardToken)),
    );
  }
  addAuthRule(_account: string, rule: SimulatedAuthRule) {
    this.rules.push(rule);
    return Promise.resolve();
  }
}

export class LithicContractServer {
  readonly apiKey = "contract_lithic_key_0001";
  readonly webhookSecret = `whsec_${btoa("contract lithic webhook secret!!")}`;
  /** Every request, in order: `METHOD /path`. */
  readonly requests: string[] = [];
  /** The body of every card creation, in order, as it came over the wire. */
  readonly cardBodies: string[] = [];
  readonly #store = new MemoryStore();
  readonly cards = this.#store.cards;
  readonly transactions = this.#store.purchases;
  readonly authRules = this.#store.rules;
  /** Lithic's clock, which judges an embed request's expiration (a test may give its fake clock). */
  now: () => number = Date.now;
  /** Embed pages served, with the card they showed. */
  readonly embedsServed: string[] = [];
  readonly #simulation = lithicSimulator({
    store: this.#store,
    accountOf: (apiKey) => apiKey === this.apiKey ? ACCOUNT : null,
    apiKeyOf: () => this.apiKey,
    now: () => Promise.resolve(Date.now()),
    realNow: () => this.now(),
    embedded: (card) => this.embedsServed.push(card.token),
  });
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

  /** The card's full number and CVV, as only Lithic and its holder see them. */
  panOf(card: ContractCard): string {
    return simulatedCardNumbers(card.token).pan;
  }

  cvvOf(card: ContractCard): string {
    return simulatedCardNumbers(card.token).cvv;
  }

  /** A purchase on the card: authorized (PENDING), or settled; a single-use card closes at the first. */
  async spend(cardToken: string, cents: number, status: "PENDING" | "SETTLED"): Promise<void> {
    await spendOnCard(this.#store, this.cards.get(cardToken)!, { cents, status, at: Date.now() });
  }

  /** A webhook event and the headers Lithic signs it with (`secret`: another secret forges it). */
  signedWebhook(
    event: Record<string, unknown>,
    options: { secret?: string; at?: Date } = {},
  ): { body: string; headers: Record<string, string> } {
    const id = `msg_${++this.#sequence}`;
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

  #hang(): Promise<Response> {
    const { promise, resolve } = Promise.withResolvers<Response>();
    const release = () => resolve(lithicError(500, "contract server shut down"));
    this.#hanging.add(release);
    return promise;
  }

  async #handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    this.requests.push(`${request.method} ${url.pathname}`);
    if (request.method === "POST" && url.pathname === "/v1/cards") {
      this.cardBodies.push(await request.clone().text());
    }
    const authorized = request.headers.get("authorization") === this.apiKey;
    const scripted = !authorized
      ? -1
      : this.#script.findIndex((s) => s.method === request.method && s.path.test(url.pathname));
    const disruption = scripted >= 0 ? this.#script.splice(scripted, 1)[0].disruption : null;
    if (disruption === "hang") return await this.#hang();
    if (disruption === "5xx") return lithicError(500, "Internal server error");
    if (typeof disruption === "object" && disruption !== null) {
      return lithicError(disruption.status, disruption.message);
    }
    const answer = await this.#simulation(request);
    return disruption === "take_then_hang" ? await this.#hang() : answer;
  }
}
