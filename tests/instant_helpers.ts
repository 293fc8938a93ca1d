/**
 * The instant deposit rail on the money fixture, pointed at the Increase contract server: the
 * company's Increase settings name the server, the rail's calls give up after a short timeout, and
 * leases run on a fake clock.
 */
import { jobHandlersOf } from "../lib/payouts/runtime.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import { checkIncreaseSettings } from "../lib/instant/settings.ts";
import { increaseSettingsStore } from "../lib/instant/store.ts";
import type { Database } from "../db/client.ts";
import { testSecretBox } from "./helpers.ts";
import {
  MONEY_SETTINGS,
  type MoneyFixture,
  openMoneyFixture,
  START,
} from "./money_core_helpers.ts";
import { IncreaseContractServer } from "./increase_contract_server.ts";

export const TEST_INCREASE_TIMEOUT_MS = 300;
export const INSTANT_METHOD = 4;

export interface InstantFixture {
  readonly m: MoneyFixture;
  readonly server: IncreaseContractServer;
  readonly clock: FakeClock;
}

/** Saves the server's settings for a company in a database. */
export async function configureIncrease(
  database: Database,
  server: IncreaseContractServer,
  companyId: string,
  now: number,
): Promise<void> {
  const settings = checkIncreaseSettings(server.settingsJson(), database.environment);
  if (!settings.ok) throw new Error(settings.message);
  await database.writer.write((tx) =>
    increaseSettingsStore.save(tx, testSecretBox, companyId, settings.value, null, now)
  );
}

/** The money fixture whose instant deposits go to an Increase contract server. */
export async function withIncrease(fn: (fixture: InstantFixture) => Promise<void>): Promise<void> {
  const server = await IncreaseContractServer.start();
  const clock = new FakeClock(START);
  const m = await openMoneyFixture({
    clock,
    handlers: (database) =>
      jobHandlersOf(
        "test",
        { ...MONEY_SETTINGS, rails: { increaseTimeoutMs: TEST_INCREASE_TIMEOUT_MS } },
        database,
        testSecretBox,
      ),
  });
  try {
    await configureIncrease(m.database, server, m.companyId, START);
    await fn({ m, server, clock });
  } finally {
    await m.close();
    await server.close();
  }
}

/**
 * One payout of `amountCents` whose payee chose an instant bank payment to account `accountNumber`
 * at `routingNumber` (kept sealed, as the portal keeps it); returns its id once submitted.
 */
export async function chooseInstantBank(
  m: MoneyFixture,
  amountCents: number,
  routingNumber: string,
  accountNumber = "000123456789",
): Promise<string> {
  const created = await m.create({
    payeeUuid: "p0",
    amountCents,
    allowedPaymentMethodIds: [INSTANT_METHOD, 1],
  });
  if (!created.ok) throw new Error(created.message);
  await m.settle();
  const payoutId = created.value.payouts[0].id;
  const selected = await m.database.writer.write(async (tx) =>
    selectMethod(tx, payoutId, {
      paymentMethodId: INSTANT_METHOD,
      details: { accountNumber },
      kept: {
        instant_to: "bank",
        routing_number: routingNumber,
        account_holder: "Pat Doe",
        account_sealed: await testSecretBox.sealText(accountNumber),
      },
    }, m.now())
  );
  if (!selected.ok) throw new Error(selected.message);
  await m.settle();
  return payoutId;
}

/**
 * One payout of `amountCents` whose payee typed a card at the hosted page (the vault's token) and
 * gave the name and ZIP on it; returns its id once its submission ran.
 */
export async function chooseInstant(
  m: MoneyFixture,
  amountCents: number,
  cardTokenId: string,
): Promise<string> {
  const created = await m.create({
    payeeUuid: "p0",
    amountCents,
    allowedPaymentMethodIds: [INSTANT_METHOD, 1],
  });
  if (!created.ok) throw new Error(created.message);
  await m.settle();
  const payoutId = created.value.payouts[0].id;
  const selected = await m.database.writer.write((tx) =>
    selectMethod(tx, payoutId, {
      paymentMethodId: INSTANT_METHOD,
      details: {},
      kept: { card_token_id: cardTokenId, cardholder_name: "Pat Q Doe", zip: "73301" },
    }, m.now())
  );
  if (!selected.ok) throw new Error(selected.message);
  await m.settle();
  return payoutId;
}
