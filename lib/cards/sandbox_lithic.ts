/**
 * The sandbox's Lithic: the simulation of Lithic's API (lib/cards/simulator.ts) over the test
 * database (lib/cards/simulator_store.ts), so its cards, their idempotency keys and their
 * purchases survive a restart. A test company without Lithic settings reaches it with the
 * sandbox's settings (one account per company, no secrets) through an injected `fetch`: no socket,
 * no server. It keeps the sandbox's deterministic outcomes, on each company's sandbox clock:
 *
 * - a payout whose selection the sandbox scenario says is declined (a `fail+vcc` payee, card
 *   `4000000000000002`) gets no card: 422, which the rail records as `card_not_issued`;
 * - any other card is issued OPEN, and its payee spends it in full a day later: one settled
 *   purchase of the spend limit closes the single-use card, and Lithic's webhooks
 *   `card_transaction.updated` and then `card.updated` (state CLOSED) are delivered (in process,
 *   signed with the sandbox's secret) to the service, which reads the card, records it closed and
 *   finds nothing left to come back;
 * - a card whose spend limit ends in 99 cents is never spent: the service closes it at its expiry
 *   and its whole limit comes back as a late return (`card_unspent`).
 *
 * A card whose state a request changes (the service's close at expiry) is told to the service by
 * Lithic's `card.updated` webhook ({card_token, state, previous_fields}), delivered the same way
 * on the company's sandbox clock; the service reads the card again, as it does on Lithic's.
 */
import { externalJob, type JobHandler } from "../../db/scheduler.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { Database } from "../../db/client.ts";
import { Webhook } from "standardwebhooks";
import type { Clock } from "../platform/clock.ts";
import type { ProviderReach } from "../rails/provider_reach.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { loadPayout } from "../payouts/store.ts";
import type { LithicReach } from "./client.ts";
import { receiveLithicWebhook } from "./service.ts";
import { CARD_VALID_DAYS_DEFAULT } from "./settings.ts";
import { lithicSimulator, type SimulatedCard, spendOnCard } from "./simulator.ts";
import { sandboxLithicStore } from "./simulator_store.ts";
import { CARD_JOBS } from "./store.ts";

/** Where the sandbox's Lithic answers, under the service's base URL (its card page is public). */
export const SANDBOX_LITHIC_PATH = "/rails/lithic/sandbox";
/** A sandbox card whose spend limit ends in these cents is never spent (its balance comes back). */
export const SANDBOX_UNSPENT_CENTS = 99;
/** How long after its issue the sandbox's payee spends a card. */
export const SANDBOX_PURCHASE_AFTER_MS = 86_400_000;
const SANDBOX_API_KEY_PREFIX = "sandbox_lithic_";
/** Not a secret: the sandbox's Lithic signs only what it delivers in process. */
const SANDBOX_WEBHOOK_SECRET = `whsec_${btoa("sandbox lithic, not a secret")}`;
/** A claim on one sandbox purchase and its webhook. */
const PURCHASE_LEASE_MS = 60_000;

/** The sandbox's Lithic of a test database, as the composition root binds it. */
export interface SandboxLithic {
  /** What a company without Lithic settings reaches: its account at the sandbox's Lithic. */
  reach(companyId: string): LithicReach;
  /** Real time; each company's sandbox clock is real time plus its offset. */
  readonly clock: Clock;
}

/**
 * Whether the sandbox scenario of the payout a card is asked for (its memo is the submission's
 * reference, `po_…-1`) says its card is declined.
 */
async function scenarioDeclines(database: Database, memo: string): Promise<boolean> {
  const payout = await loadPayout(database.readClient, memo.slice(0, memo.lastIndexOf("-")));
  return payout?.methodDetails.scenario === "declined";
}

/** The sandbox's Lithic as a `fetch` handler on a test database, on real time `clock`. */
export function sandboxLithicFetch(
  database: Database,
  clock: Clock,
): (request: Request) => Promise<Response> {
  const now = (account: string) => domainNow(database, account, clock.now());
  /** Plans one of the sandbox's jobs about a card, `afterMs` from now on its company's clock. */
  const schedule = async (
    card: SimulatedCard,
    kind: string,
    afterMs: number,
    payload?: Record<string, unknown>,
  ) => {
    const at = await now(card.account_token);
    await database.writer.write((tx) =>
      scheduleJob(tx, {
        companyId: card.account_token,
        kind,
        subjectId: card.token,
        dueAt: at + afterMs,
        payload,
      }, at)
    );
  };
  return lithicSimulator({
    store: sandboxLithicStore(database),
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
    updated: (card, previousState) =>
      schedule(card, CARD_JOBS.sandboxUpdate, 0, {
        state: card.state,
        previous_state: previousState,
      }),
    async issued(card) {
      if (card.spend_limit % 100 === SANDBOX_UNSPENT_CENTS) return;
      await schedule(card, CARD_JOBS.sandboxPurchase, SANDBOX_PURCHASE_AFTER_MS);
    },
  });
}

/** The sandbox's Lithic of a test database, with the settings a company without its own gets. */
export function sandboxLithic(database: Database, baseUrl: string, clock: Clock): SandboxLithic {
  const handle = sandboxLithicFetch(database, clock);
  const fetch = (input: RequestInfo | URL, init?: RequestInit) => handle(new Request(input, init));
  return {
    clock,
    reach: (companyId) => ({
      settings: {
        apiKey: `${SANDBOX_API_KEY_PREFIX}${companyId}`,
        baseUrl: `${baseUrl.replace(/\/$/, "")}${SANDBOX_LITHIC_PATH}`,
        webhookSecret: SANDBOX_WEBHOOK_SECRET,
        cardValidDays: CARD_VALID_DAYS_DEFAULT,
        allowedMccs: [],
      },
      fetch,
    }),
  };
}

/**
 * The sandbox's Lithic answering a request the payee's browser makes (its hosted card page, shown
 * in the portal's iframe) from the test database; `clock` judges the embed request's expiration.
 */
export function sandboxLithicPage(
  database: Database,
  clock: Clock,
  request: Request,
): Promise<Response> {
  return sandboxLithicFetch(database, clock)(request);
}

/**
 * The sandbox's Lithic's jobs. The payee's purchase, due a day after the card's issue: the whole
 * limit settles on the card (the same purchase if the job runs again) unless the card was closed
 * meanwhile, and Lithic's `card_transaction.updated` for it is delivered to the service in process.
 * A card's update: Lithic's `card.updated`, delivered the same way.
 */
export function sandboxLithicJobs(deps: {
  readonly database: Database;
  readonly lithic: ProviderReach<LithicReach>;
  readonly sandboxLithic: SandboxLithic;
}): Readonly<Record<string, JobHandler>> {
  const store = sandboxLithicStore(deps.database);
  return {
    [CARD_JOBS.sandboxPurchase]: externalJob<{ token: string; jobId: string }, void>({
      leaseMs: PURCHASE_LEASE_MS,
      prepare: (_tx, job) => Promise.resolve({ token: job.subjectId, jobId: job.id }),
      async call({ token, jobId }, job) {
        const card = await store.card(token);
        if (!card) throw new Error(`the sandbox's Lithic has no card ${token}`);
        const purchaseToken = `${token}-purchase`;
        // Run again after the purchase was kept: the same purchase and webhooks (the same ids).
        const earlier = (await store.transactions(card.account_token, token))
          .find((t) => t.token === purchaseToken);
        // Closed before its payee spent it (the service's close at expiry, an operator's).
        if (card.state === "CLOSED" && !earlier) return;
        const { transaction, closed } = earlier
          ? { transaction: earlier, closed: card.type === "SINGLE_USE" }
          : await spendOnCard(store, card, {
            cents: card.spend_limit,
            status: "SETTLED",
            at: job.dueAt,
            token: purchaseToken,
          });
        await deliver(deps, card, {
          id: `msg_${jobId}`,
          body: JSON.stringify({ event_type: "card_transaction.updated", ...transaction }),
        });
        // The single-use card closed itself at the authorization: Lithic tells of it as of any
        // change of state (only an open card authorizes, so it was OPEN before).
        if (closed) {
          await deliver(deps, card, {
            id: `msg_${jobId}-card`,
            body: JSON.stringify({
              event_type: "card.updated",
              card_token: token,
              state: "CLOSED",
              previous_fields: { state: "OPEN" },
            }),
          });
        }
      },
      record: () => Promise.resolve(),
    }),
    [CARD_JOBS.sandboxUpdate]: externalJob<{ token: string; jobId: string; body: string }, void>({
      leaseMs: PURCHASE_LEASE_MS,
      prepare: (_tx, job) =>
        Promise.resolve({
          token: job.subjectId,
          jobId: job.id,
          body: JSON.stringify({
            event_type: "card.updated",
            card_token: job.subjectId,
            state: job.payload.state,
            previous_fields: { state: job.payload.previous_state },
          }),
        }),
      async call({ token, jobId, body }) {
        const card = await store.card(token);
        if (!card) throw new Error(`the sandbox's Lithic has no card ${token}`);
        await deliver(deps, card, { id: `msg_${jobId}`, body });
      },
      record: () => Promise.resolve(),
    }),
  };
}

/** A webhook as Lithic signs it (Standard Webhooks, real time), received by the service. */
async function deliver(
  deps: {
    readonly database: Database;
    readonly lithic: ProviderReach<LithicReach>;
    readonly sandboxLithic: SandboxLithic;
  },
  card: SimulatedCard,
  event: { readonly id: string; readonly body: string },
): Promise<void> {
  const at = new Date();
  const received = await receiveLithicWebhook(deps, {
    companyId: card.account_token,
    headers: {
      id: event.id,
      timestamp: String(Math.floor(at.getTime() / 1000)),
      signature: new Webhook(SANDBOX_WEBHOOK_SECRET).sign(event.id, at, event.body),
    },
    body: event.body,
  }, deps.sandboxLithic.clock.now());
  if (!received.ok) {
    throw new Error(`the sandbox's Lithic webhook was refused: ${received.message}`);
  }
}
