/**
 * The sandbox's Lithic: the simulation of lib/cards/simulator.ts over the test database
 * (sandbox_lithic_cards), so its cards, their idempotency keys and their purchases survive a
 * restart. A test company without Lithic settings reaches it with the sandbox's settings (one
 * account per company, no secrets) through an injected `fetch`: no socket, no server. It keeps the
 * sandbox's deterministic outcomes on the sandbox clock:
 *
 * - a payout whose selection the sandbox scenario says is declined (a `fail+vcc` payee, card
 *   `4000000000000002`) gets no card: 422, which the rail records as `card_not_issued`;
 * - any other card is issued OPEN, and its payee spends it in full at once (one settled purchase
 *   of the spend limit; the single-use card closes), so nothing comes back at its expiry;
 * - a card whose spend limit ends in 99 cents is never spent: the service closes it at its expiry
 *   and its whole limit comes back as a late return (`card_unspent`).
 */
import type { Database } from "../../db/client.ts";
import type { Clock } from "../platform/clock.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { loadPayout } from "../payouts/store.ts";
import type { LithicReach } from "./client.ts";
import { CARD_VALID_DAYS_DEFAULT } from "./settings.ts";
import {
  lithicSimulator,
  type LithicSimulatorStore,
  type SimulatedAuthRule,
  type SimulatedCard,
  type SimulatedTransaction,
  spendOnCard,
} from "./simulator.ts";

/** Where the sandbox's Lithic answers, under the service's base URL (its embed page is public). */
export const SANDBOX_LITHIC_PATH = "/rails/lithic/sandbox";
/** A sandbox card whose spend limit ends in these cents is never spent (its balance comes back). */
export const SANDBOX_UNSPENT_CENTS = 99;
const SANDBOX_API_KEY_PREFIX = "sandbox_lithic_";
/** Not a secret: the sandbox's Lithic signs nothing anyone must trust. */
const SANDBOX_WEBHOOK_SECRET = `whsec_${btoa("sandbox lithic, not a secret")}`;

/** A company without Lithic settings, in test: the sandbox's Lithic with the sandbox's settings. */
export type SandboxLithic = (companyId: string) => LithicReach;

function parsed<T>(value: unknown): T {
  return JSON.parse(String(value)) as T;
}

/** The simulation's store on the test database; each write is its own unit (Lithic's side). */
function sandboxLithicStore(database: Database): LithicSimulatorStore {
  const reader = database.readClient;
  const column = async <T>(token: string, name: string): Promise<T | null> => {
    const { rows } = await reader.execute({
      sql: `SELECT ${name} AS value FROM sandbox_lithic_cards WHERE token = ?`,
      args: [token],
    });
    return rows[0] ? parsed<T>(rows[0].value) : null;
  };
  const ofAccount = async <T>(account: string, cardToken: string | null, name: string) => {
    const { rows } = await reader.execute({
      sql: `SELECT ${name} AS value FROM sandbox_lithic_cards
            WHERE company_id = ? AND (? IS NULL OR token = ?) ORDER BY created_at, token`,
      args: [account, cardToken, cardToken],
    });
    return rows.flatMap((row) => parsed<T[]>(row.value));
  };
  /** Rewrites one JSON column of a card, read and written in one unit. */
  const update = (token: string, name: string, change: (value: unknown) => unknown) =>
    database.writer.write(async (tx) => {
      const { rows } = await tx.execute({
        sql: `SELECT ${name} AS value FROM sandbox_lithic_cards WHERE token = ?`,
        args: [token],
      });
      if (!rows[0]) throw new Error(`the sandbox's Lithic has no card ${token}`);
      await tx.execute({
        sql: `UPDATE sandbox_lithic_cards SET ${name} = ? WHERE token = ?`,
        args: [JSON.stringify(change(parsed(rows[0].value))), token],
      });
    });
  return {
    async createdUnder(account, key) {
      const { rows } = await reader.execute({
        sql: `SELECT request, answer FROM sandbox_lithic_cards
              WHERE company_id = ? AND idempotency_key = ?`,
        args: [account, key],
      });
      return rows[0]
        ? { request: String(rows[0].request), answer: parsed<SimulatedCard>(rows[0].answer) }
        : null;
    },
    addCard: (card, key, request) =>
      database.writer.write(async (tx) => {
        const json = JSON.stringify(card);
        const added = await tx.execute({
          sql: `INSERT INTO sandbox_lithic_cards (token, company_id, idempotency_key, request,
                  answer, card, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (company_id, idempotency_key) DO NOTHING`,
          args: [
            card.token,
            card.account_token,
            key,
            request,
            json,
            json,
            Date.parse(card.created),
          ],
        });
        if (added.rowsAffected > 0) return card;
        const { rows } = await tx.execute({
          sql:
            `SELECT answer FROM sandbox_lithic_cards WHERE company_id = ? AND idempotency_key = ?`,
          args: [card.account_token, key],
        });
        return parsed<SimulatedCard>(rows[0].answer);
      }),
    card: (token) => column<SimulatedCard>(token, "card"),
    setState: (token, state) =>
      update(token, "card", (card) => ({ ...(card as SimulatedCard), state })),
    transactions: (account, cardToken) =>
      ofAccount<SimulatedTransaction>(account, cardToken, "transactions"),
    putTransaction: (transaction) =>
      update(transaction.card_token, "transactions", (value) => [
        ...(value as SimulatedTransaction[]).filter((t) => t.token !== transaction.token),
        transaction,
      ]),
    authRules: async (account, cardToken) => {
      const rules = await ofAccount<SimulatedAuthRule>(account, null, "auth_rules");
      const unique = [...new Map(rules.map((rule) => [rule.token, rule])).values()];
      return unique.filter((rule) => cardToken === null || rule.card_tokens.includes(cardToken));
    },
    async addAuthRule(account, rule) {
      for (const token of rule.card_tokens) {
        const card = await column<SimulatedCard>(token, "card");
        if (card?.account_token !== account) continue;
        await update(token, "auth_rules", (rules) => [...(rules as SimulatedAuthRule[]), rule]);
      }
    },
  };
}

/**
 * Whether the sandbox scenario of the payout a card is asked for (its memo is the submission's
 * reference, `po_…-1`) says its card is declined.
 */
async function scenarioDeclines(database: Database, memo: string): Promise<boolean> {
  const payout = await loadPayout(database.readClient, memo.slice(0, memo.lastIndexOf("-")));
  return payout?.methodDetails.scenario === "declined";
}

/**
 * The sandbox's Lithic as a `fetch` handler on a test database; `clock` is real time (the sandbox
 * clock of each company is real time plus its offset).
 */
export function sandboxLithicFetch(
  database: Database,
  clock: Clock,
): (request: Request) => Promise<Response> {
  const store = sandboxLithicStore(database);
  const now = (account: string) => domainNow(database, account, clock.now());
  return lithicSimulator({
    store,
    accountOf: (apiKey) =>
      apiKey.startsWith(SANDBOX_API_KEY_PREFIX)
        ? apiKey.slice(SANDBOX_API_KEY_PREFIX.length)
        : null,
    apiKeyOf: (account) => `${SANDBOX_API_KEY_PREFIX}${account}`,
    now,
    realNow: () => clock.now(),
    refusal: async (_account, params) =>
      await scenarioDeclines(database, String(params.memo ?? ""))
        ? { status: 422, message: "the card program declined to issue this card (sandbox)" }
        : null,
    async issued(card) {
      if (card.spend_limit % 100 === SANDBOX_UNSPENT_CENTS) return;
      await spendOnCard(store, card, {
        cents: card.spend_limit,
        status: "SETTLED",
        at: await now(card.account_token),
      });
    },
  });
}

/** The sandbox's Lithic of a test database, with the settings a company without its own gets. */
export function sandboxLithic(database: Database, baseUrl: string, clock: Clock): SandboxLithic {
  const handle = sandboxLithicFetch(database, clock);
  const fetch = (input: RequestInfo | URL, init?: RequestInit) => handle(new Request(input, init));
  return (companyId) => ({
    settings: {
      apiKey: `${SANDBOX_API_KEY_PREFIX}${companyId}`,
      baseUrl: `${baseUrl.replace(/\/$/, "")}${SANDBOX_LITHIC_PATH}`,
      webhookSecret: SANDBOX_WEBHOOK_SECRET,
      cardValidDays: CARD_VALID_DAYS_DEFAULT,
      allowedMccs: [],
    },
    fetch,
  });
}
