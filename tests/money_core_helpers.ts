/** A company and line on temporary databases, funded, with the sandbox job handlers. */
import type { Database } from "../db/client.ts";
import { addFunds, type FundingMethod } from "../lib/funding/store.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import { type MethodSelection, selectMethod } from "../lib/payouts/jobs.ts";
import { applyMove, createDisbursement, type NewPayout } from "../lib/payouts/store.ts";
import { batchServiceDeps, jobHandlersOf } from "../lib/payouts/runtime.ts";
import { providerReachesOf } from "../lib/payouts/provider_reaches.ts";
import { advanceSandboxClock, type JobHandlers, runDueJobs } from "../db/scheduler.ts";
import type { Clock } from "../lib/platform/clock.ts";
import type { Environment } from "../lib/platform/config.ts";
import { openTempDatabase, testSecretBox } from "./helpers.ts";
import { tokenizeSandboxCard } from "../lib/instant/simulator.ts";
import { sandboxTestDetails } from "../lib/rails/sandbox.ts";

export const START = Date.UTC(2026, 0, 5, 15, 0, 0); // a Monday, 15:00 UTC
export const ALL_METHODS = [1, 2, 3, 4, 5, 6, 7];

export type PayeeSpec = Partial<NewPayout> & { email?: string };

export interface MoneyFixture {
  database: Database;
  companyId: string;
  lineId: string;
  /** Domain time: START plus every advance so far. */
  now(): number;
  fund(cents: number, method?: FundingMethod, large?: boolean): Promise<string>;
  create(
    payees: PayeeSpec | PayeeSpec[],
    options?: { large?: boolean; uuid?: string },
  ): ReturnType<typeof createDisbursement>;
  select(
    payoutId: string,
    paymentMethodId: number,
    details: MethodSelection["details"],
  ): ReturnType<typeof selectMethod>;
  cancel(payoutId: string): ReturnType<typeof applyMove>;
  /** Runs what is due now. */
  settle(): Promise<number>;
  advance(seconds: number): Promise<number>;
  balances(): Promise<Awaited<ReturnType<typeof readLineBalances>>>;
  payout(id: string): Promise<Record<string, unknown>>;
  events(payoutId: string): Promise<string[]>;
  close(): Promise<void>;
}

let sequence = 0;

/**
 * What the portal keeps of a postal check's selection: the address the payee entered (a check is
 * never chosen without one), with the ZIP the test gave.
 */
export function mailingAddressFor(
  paymentMethodId: number,
  details: MethodSelection["details"],
): Record<string, string> | undefined {
  if (paymentMethodId !== 2) return undefined;
  return {
    address_one: "1 Main St",
    city: "Austin",
    state: "TX",
    zip_code: details.zip ?? "73301",
  };
}

/**
 * What the portal keeps of an instant deposit to a card: the payee typed `cardNumber` (a sandbox
 * test card, the one that is paid by default) at the Increase simulator's hosted card field, which
 * gave the token; the card number itself is not kept.
 */
export async function sandboxCardFor(
  database: Database,
  cardNumber: string = sandboxTestDetails.cardSucceeds,
  now: number = START,
): Promise<Record<string, string>> {
  const tokenized = await tokenizeSandboxCard(
    database,
    { pan: cardNumber, expiry: "12/30", cvv: "123" },
    now,
  );
  if (!tokenized.ok) throw new Error(tokenized.message);
  return {
    card_token_id: tokenized.tokenId,
    cardholder_name: "Pat Doe",
    zip: "73301",
    last_four: tokenized.lastFour,
  };
}

/**
 * The selection the portal would make of `details`: a postal check with its address, an instant
 * deposit with the card typed at the simulator's hosted card field (the card number stays there).
 */
export async function selectionFor(
  database: Database,
  paymentMethodId: number,
  details: MethodSelection["details"],
  now: number,
): Promise<MethodSelection> {
  if (paymentMethodId !== 4) {
    return { paymentMethodId, details, kept: mailingAddressFor(paymentMethodId, details) };
  }
  return {
    paymentMethodId,
    details: {},
    kept: await sandboxCardFor(database, details.cardNumber, now),
  };
}

export interface MoneyFixtureOptions {
  /** The job handlers on the fixture's database (default: the sandbox's). */
  readonly handlers?: (database: Database) => JobHandlers;
  /** Real time, for the leases of jobs that call a rail (default: the system clock). */
  readonly clock?: Clock;
  /** The database's environment (default test). */
  readonly environment?: Environment;
}

export const MONEY_SETTINGS = { offerTtlDays: 90, baseUrl: "http://127.0.0.1:8000" };

/** What operators' batch actions and imports run on, for one test database acting as `environment`. */
export function moneyBatchDeps(database: Database, environment: Environment) {
  return batchServiceDeps({
    environment,
    database,
    liveDatabase: database,
    secretBox: testSecretBox,
    runtimeSettings: MONEY_SETTINGS,
  });
}

/** The settings the fixture's jobs run on by default: real time stands at START. */
export const FIXTURE_SETTINGS = { ...MONEY_SETTINGS, clock: { now: () => START } };

/**
 * A test database and how its companies reach each provider, as the composition root decides for
 * the database's environment (on the fixture's real time, as its jobs): what the provider use
 * cases (webhooks, lookups, cancels) run on.
 */
export function moneyProviderDeps(database: Database) {
  return {
    database,
    ...providerReachesOf(database.environment, FIXTURE_SETTINGS, database, testSecretBox),
  };
}

export async function openMoneyFixture(options: MoneyFixtureOptions = {}): Promise<MoneyFixture> {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-money-" });
  const environment = options.environment ?? "test";
  const database = await openTempDatabase(dir, environment);
  const companyId = "co_money";
  const lineId = "line_money";
  await database.writer.write(async (tx) => {
    await tx.execute({
      sql: "INSERT INTO companies (id, name, tin, created_at) VALUES (?, 'Acme', '123456789', ?)",
      args: [companyId, START],
    });
    await tx.execute({
      sql: "INSERT INTO business_lines (id, company_id, code, created_at) VALUES (?, ?, 'auto', ?)",
      args: [lineId, companyId, START],
    });
  });
  const handlers = options.handlers?.(database) ??
    // Real time stands at START: the fixture's domain time is START plus the sandbox clock's offset.
    jobHandlersOf(environment, FIXTURE_SETTINGS, database, testSecretBox);
  const runOptions = { clock: options.clock };
  let offsetMs = 0;
  const fixture: MoneyFixture = {
    database,
    companyId,
    lineId,
    now: () => START + offsetMs,
    async fund(cents, method = "WireTransfer", large = false) {
      const result = await database.writer.write((tx) =>
        addFunds(
          tx,
          {
            companyId,
            lineId,
            paymentMethod: method,
            amountCents: cents,
            description: "test funding",
            largeDisbursement: large,
            requestFingerprint: `f${sequence++}`,
          },
          environment,
          fixture.now(),
        )
      );
      if (!result.ok) throw new Error(result.message);
      return result.value.funding.id;
    },
    create(payees, options = {}) {
      const list = Array.isArray(payees) ? payees : [payees];
      return database.writer.write((tx) =>
        createDisbursement(tx, {
          companyId,
          lineId,
          kind: "disbursement",
          externalUuid: options.uuid ?? `d${sequence++}`,
          requestFingerprint: "x",
          largeDisbursement: options.large ?? false,
          payouts: list.map((p, i) => ({
            payeeUuid: p.payeeUuid ?? `p${i}`,
            amountCents: p.amountCents ?? 10_000,
            allowedPaymentMethodIds: p.allowedPaymentMethodIds ?? ALL_METHODS,
            permissionRequiredFrom: p.permissionRequiredFrom ?? [],
            payee: { email: p.email ?? "noaction@example.test" },
          })),
        }, fixture.now())
      );
    },
    async select(payoutId, paymentMethodId, details) {
      const selection = await selectionFor(database, paymentMethodId, details, fixture.now());
      return await database.writer.write((tx) =>
        selectMethod(tx, payoutId, selection, fixture.now())
      );
    },
    cancel: (payoutId) =>
      database.writer.write((tx) => applyMove(tx, payoutId, { kind: "cancel" }, fixture.now())),
    settle: () => runDueJobs(database, companyId, fixture.now(), handlers, runOptions),
    async advance(seconds) {
      if (environment === "live") {
        // Live has no sandbox clock: the fixture's time moves and what fell due runs.
        offsetMs += seconds * 1000;
        return await runDueJobs(database, companyId, fixture.now(), handlers, runOptions);
      }
      const result = await advanceSandboxClock(
        database,
        companyId,
        seconds,
        START,
        handlers,
        runOptions,
      );
      offsetMs = result.now - START;
      return result.jobsRun;
    },
    balances: () => readLineBalances(database.readClient, lineId),
    async payout(id) {
      const { rows } = await database.readClient.execute({
        sql: "SELECT * FROM payouts WHERE id = ?",
        args: [id],
      });
      return { ...rows[0] };
    },
    async events(payoutId) {
      const { rows } = await database.readClient.execute({
        sql: "SELECT event_type_id FROM events WHERE payout_id = ? ORDER BY created_at, rowid",
        args: [payoutId],
      });
      const names: Record<number, string> = {
        1: "created",
        2: "pending_authorization",
        4: "offered",
        5: "selected",
        6: "processing",
        7: "completed",
        8: "failed",
        9: "canceled",
      };
      return rows.map((row) => names[Number(row.event_type_id)]);
    },
    async close() {
      await database.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
  return fixture;
}

export const DAY_SECONDS = 86_400;
