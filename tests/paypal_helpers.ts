/**
 * The PayPal rail on the money fixture, pointed at the contract test server: the company's PayPal
 * settings name the server, the rail's calls give up after a short timeout, and leases run on a
 * fake clock.
 */
import { jobHandlersOf } from "../lib/payouts/runtime.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import { checkPaypalSettings } from "../lib/paypal/settings.ts";
import { savePaypalSettings } from "../lib/paypal/settings_store.ts";
import type { Database } from "../db/client.ts";
import { testSecretBox } from "./helpers.ts";
import {
  MONEY_SETTINGS,
  type MoneyFixture,
  openMoneyFixture,
  START,
} from "./money_core_helpers.ts";
import { PaypalContractServer } from "./paypal_contract_server.ts";

/** How long the rail waits for the contract server before a call counts as unanswered. */
export const TEST_PAYPAL_TIMEOUT_MS = 300;

export interface PaypalFixture {
  readonly m: MoneyFixture;
  readonly server: PaypalContractServer;
  readonly clock: FakeClock;
}

/** Saves the server's settings for a company in a database. */
export async function configurePaypal(
  database: Database,
  server: PaypalContractServer,
  companyId: string,
  now: number,
): Promise<void> {
  const settings = checkPaypalSettings(server.settingsJson(), database.environment);
  if (!settings.ok) throw new Error(settings.message);
  await database.writer.write((tx) =>
    savePaypalSettings(tx, testSecretBox, companyId, settings.value, null, now)
  );
}

/** The money fixture whose PayPal and Venmo payouts go to a contract server. */
export async function withPaypal(fn: (fixture: PaypalFixture) => Promise<void>): Promise<void> {
  const server = await PaypalContractServer.start();
  const clock = new FakeClock(START);
  const m = await openMoneyFixture({
    clock,
    handlers: (database) =>
      jobHandlersOf(
        "test",
        { ...MONEY_SETTINGS, rails: { paypalTimeoutMs: TEST_PAYPAL_TIMEOUT_MS } },
        database,
        testSecretBox,
      ),
  });
  try {
    await configurePaypal(m.database, server, m.companyId, START);
    await fn({ m, server, clock });
  } finally {
    await m.close();
    await server.close();
  }
}

export const PAYPAL_METHOD = 7;
export const VENMO_METHOD = 6;

/**
 * One payout of `amountCents` whose payee chose PayPal (their e-mail) or Venmo (their phone), as
 * the portal keeps them; returns its id once its submission ran.
 */
export async function choosePaypal(
  m: MoneyFixture,
  wallet: "paypal" | "venmo",
  amountCents: number,
  payeeUuid = "p0",
): Promise<string> {
  const methodId = wallet === "paypal" ? PAYPAL_METHOD : VENMO_METHOD;
  const created = await m.create({
    payeeUuid,
    amountCents,
    allowedPaymentMethodIds: [PAYPAL_METHOD, VENMO_METHOD],
  });
  if (!created.ok) throw new Error(created.message);
  await m.settle();
  const payoutId = created.value.payouts[0].id;
  const selected = await m.database.writer.write((tx) =>
    selectMethod(tx, payoutId, {
      paymentMethodId: methodId,
      details: {},
      kept: wallet === "paypal" ? { email: `${payeeUuid}@payee.test` } : { phone: "+15555550123" },
    }, m.now())
  );
  if (!selected.ok) throw new Error(selected.message);
  await m.settle();
  return payoutId;
}

export async function rows(m: MoneyFixture, sql: string, ...args: (string | number)[]) {
  return (await m.database.readClient.execute({ sql, args })).rows.map((row) => ({ ...row }));
}

/** The payout's status and failure reason. */
export async function statusOf(m: MoneyFixture, payoutId: string) {
  const payout = await m.payout(payoutId);
  return { status: payout.status, failure_reason: payout.failure_reason };
}

/** The reference (PayPal's sender_item_id) of the payout's latest PayPal entry. */
export async function referenceOf(m: MoneyFixture, payoutId: string): Promise<string> {
  const [entry] = await rows(
    m,
    "SELECT reference FROM rail_batch_entries WHERE payout_id = ? ORDER BY created_at DESC LIMIT 1",
    payoutId,
  );
  return String(entry.reference);
}

/** Captures what the service logs (alerts included) while `fn` runs. */
export async function capturingLogs<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; logs: Record<string, unknown>[] }> {
  const original = console.error;
  const logs: Record<string, unknown>[] = [];
  console.error = (line: unknown) => {
    try {
      logs.push(JSON.parse(String(line)));
    } catch {
      logs.push({ msg: String(line) });
    }
  };
  try {
    return { value: await fn(), logs };
  } finally {
    console.error = original;
  }
}
