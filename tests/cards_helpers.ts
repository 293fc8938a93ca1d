/**
 * The virtual card rail on the money fixture, pointed at the Lithic contract server: the
 * company's Lithic settings name the server, the rail's calls give up after a short timeout, and
 * leases run on a fake clock.
 */
import { jobHandlersOf } from "../lib/payouts/runtime.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import { checkLithicSettings } from "../lib/cards/settings.ts";
import { lithicSettingsStore } from "../lib/cards/store.ts";
import type { Database } from "../db/client.ts";
import { testSecretBox } from "./helpers.ts";
import {
  MONEY_SETTINGS,
  type MoneyFixture,
  openMoneyFixture,
  START,
} from "./money_core_helpers.ts";
import { LithicContractServer } from "./lithic_contract_server.ts";
import { api } from "./api_helpers.ts";
import type { HttpFixture } from "./http_fixture.ts";
import { offeredPayee, PortalBrowser, verify } from "./portal_helpers.ts";

/** How long the rail waits for the contract server before a call counts as unanswered. */
export const TEST_LITHIC_TIMEOUT_MS = 300;
export const VCC_METHOD = 3;

export interface CardFixture {
  readonly m: MoneyFixture;
  readonly server: LithicContractServer;
  readonly clock: FakeClock;
}

/** Saves the server's settings (with `extra` fields) for a company in a database. */
export async function configureLithic(
  database: Database,
  server: LithicContractServer,
  companyId: string,
  now: number,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const settings = checkLithicSettings(server.settingsJson(extra), database.environment);
  if (!settings.ok) throw new Error(settings.message);
  await database.writer.write((tx) =>
    lithicSettingsStore.save(tx, testSecretBox, companyId, settings.value, null, now)
  );
}

/** The money fixture whose virtual card payouts go to a Lithic contract server. */
export async function withLithic(
  fn: (fixture: CardFixture) => Promise<void>,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const server = await LithicContractServer.start();
  const clock = new FakeClock(START);
  const m = await openMoneyFixture({
    clock,
    handlers: (database) =>
      jobHandlersOf(
        "test",
        { ...MONEY_SETTINGS, rails: { lithicTimeoutMs: TEST_LITHIC_TIMEOUT_MS } },
        database,
        testSecretBox,
      ),
  });
  try {
    await configureLithic(m.database, server, m.companyId, START, extra);
    await fn({ m, server, clock });
  } finally {
    await m.close();
    await server.close();
  }
}

/** One payout of `amountCents` whose payee chose a virtual card; returns its id once submitted. */
export async function chooseCard(
  m: MoneyFixture,
  amountCents: number,
  payeeUuid = "p0",
): Promise<string> {
  const created = await m.create({
    payeeUuid,
    amountCents,
    allowedPaymentMethodIds: [VCC_METHOD, 1],
  });
  if (!created.ok) throw new Error(created.message);
  await m.settle();
  const payoutId = created.value.payouts[0].id;
  const selected = await m.database.writer.write((tx) =>
    selectMethod(tx, payoutId, {
      paymentMethodId: VCC_METHOD,
      details: {},
      kept: { email: `${payeeUuid}@payee.test` },
    }, m.now())
  );
  if (!selected.ok) throw new Error(selected.message);
  await m.settle();
  return payoutId;
}

/** A payee of Acme (test) offered only a virtual card, who chose it in the portal; a second later. */
export async function cardChosenInPortal(
  f: HttpFixture,
): Promise<{ browser: PortalBrowser; linkPath: string }> {
  const { email, linkPath } = await offeredPayee(f, "pat", { allowed_payment_method_ids: [3] });
  const browser = new PortalBrowser(f);
  await verify(browser, linkPath, email);
  await browser.get(`${linkPath}/method?method=vcc`);
  const chosen = await browser.post(`${linkPath}/method`, { method: "vcc", email });
  if (chosen.status !== 303) throw new Error(`the choice was answered ${chosen.status}`);
  await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 1 });
  return { browser, linkPath };
}

/**
 * Seconds from `now` to 3 s before the last moment a card valid `validDays` days expires in
 * February 2026: a retry 5 s later would be a card expiring in March.
 */
export function untilExpiryMonthTurns(now: number, validDays: number): number {
  return (Date.UTC(2026, 2, 1) - validDays * 86_400_000 - 3_000 - now) / 1000;
}

export { rows, statusOf } from "./paypal_helpers.ts";
