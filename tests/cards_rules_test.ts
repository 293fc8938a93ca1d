/**
 * The virtual card rules (lib/cards/rules.ts) as a table: the card asked for, what each card state
 * does to its payout, and the late return of part of a payout's money (the state machine's
 * `lateReturn` with `returnedCents`).
 */
import assert from "node:assert/strict";
import { cardAction, cardExpiry, cardRequest } from "../lib/cards/rules.ts";
import { lateReturn } from "../lib/payouts/transition.ts";
import { checkLithicSettings } from "../lib/cards/settings.ts";

const NOW = Date.UTC(2026, 0, 5, 15);
const DAY = 86_400_000;
const card = (state: string) => ({ state, spendLimitCents: 10_000, expiresAt: NOW + 30 * DAY });
const settled = (cents: number) => ({ status: "SETTLED" as const, settled_amount: cents });
const pending = { status: "PENDING" as const, settled_amount: 0 };

Deno.test("card request: single use, the net amount as a lifetime limit, the reference as memo, the expiry's month", () => {
  assert.equal(cardExpiry(NOW, 30), NOW + 30 * DAY);
  assert.deepEqual(cardRequest("po_1-2", 10_000, cardExpiry(NOW, 30)), {
    type: "SINGLE_USE",
    spend_limit: 10_000,
    spend_limit_duration: "FOREVER",
    state: "OPEN",
    memo: "po_1-2",
    exp_month: "02",
    exp_year: "2026",
  });
  assert.throws(() => cardRequest("po_1-2", 0, cardExpiry(NOW, 30)), /positive whole cents/);
});

Deno.test("card request: the body depends only on the reference, the amount and the expiry decided once, never on when it is asked", () => {
  // A card first asked for 3 s before its 30-day expiry would fall in March, asked again 5 s later.
  const expiresAt = cardExpiry(Date.UTC(2026, 0, 29, 23, 59, 57), 30);
  const first = JSON.stringify(cardRequest("po_1-1", 10_000, expiresAt));
  assert.equal(JSON.stringify(cardRequest("po_1-1", 10_000, expiresAt)), first);
  assert.deepEqual(
    [
      cardRequest("po_1-1", 10_000, expiresAt).exp_month,
      cardRequest("po_1-1", 10_000, cardExpiry(Date.UTC(2026, 0, 30, 0, 0, 2), 30)).exp_month,
    ],
    ["02", "03"],
  );
});

Deno.test("card action: each state against each side of its payout", () => {
  const table: [string, "sent" | "completed" | "reclaimed", unknown[], number, unknown][] = [
    ["OPEN", "sent", [], NOW, { kind: "complete" }],
    ["PAUSED", "sent", [], NOW, { kind: "wait" }],
    ["PENDING_FULFILLMENT", "sent", [], NOW, { kind: "wait" }],
    ["OPEN", "completed", [], NOW, { kind: "wait" }],
    ["OPEN", "completed", [], NOW + 30 * DAY - 1, { kind: "wait" }],
    ["OPEN", "completed", [], NOW + 30 * DAY, { kind: "close" }],
    ["PAUSED", "completed", [], NOW + 31 * DAY, { kind: "close" }],
    ["CLOSED", "completed", [pending, settled(100)], NOW, { kind: "wait" }],
    ["CLOSED", "completed", [settled(4_000)], NOW, { kind: "reclaim", unspentCents: 6_000 }],
    ["CLOSED", "completed", [settled(10_000)], NOW, { kind: "reclaim", unspentCents: 0 }],
    ["CLOSED", "completed", [], NOW, { kind: "reclaim", unspentCents: 10_000 }],
    [
      "CLOSED",
      "completed",
      [{ status: "DECLINED", settled_amount: 0 }, settled(2_500)],
      NOW,
      { kind: "reclaim", unspentCents: 7_500 },
    ],
    ["CLOSED", "reclaimed", [], NOW, { kind: "wait" }],
  ];
  for (const [state, side, transactions, now, expected] of table) {
    assert.deepEqual(
      cardAction(card(state), side, transactions as never, now),
      expected,
      `${state} ${side} at ${now - NOW}`,
    );
  }
});

Deno.test("late return of part of a completed payout: 1 to what completion paid, the fees stay", () => {
  const payout = {
    status: "completed" as const,
    amountCents: 10_000,
    heldCents: 0,
    payorFeeCents: 100,
    payeeFeeCents: 200,
    serviceFeeCents: 50,
  };
  const part = lateReturn(payout, { returnedBefore: false, returnedCents: 6_000 });
  assert.ok(part.ok);
  assert.deepEqual(part.value.transfers, [{
    from: "bank",
    to: "available",
    amountCents: 6_000,
  }]);
  for (const cents of [0, 9_801, -1, 1.5]) {
    const refused = lateReturn(payout, { returnedBefore: false, returnedCents: cents });
    assert.equal(refused.ok ? "ok" : refused.code, "return_exceeds_paid", String(cents));
  }
  const whole = lateReturn(payout, { returnedBefore: false, returnedCents: 9_800 });
  assert.ok(whole.ok);
});

Deno.test("Lithic settings: defaults, the live host only in live, and the first wrong field named", () => {
  const base = { api_key: "key_1", webhook_secret: "whsec_c2VjcmV0" };
  const live = checkLithicSettings({ ...base, base_url: "https://api.lithic.com" }, "live");
  assert.deepEqual(live, {
    ok: true,
    value: {
      apiKey: "key_1",
      baseUrl: "https://api.lithic.com",
      webhookSecret: "whsec_c2VjcmV0",
      cardValidDays: 30,
      allowedMccs: [],
    },
  });
  const sandboxInLive = checkLithicSettings(
    { ...base, base_url: "https://sandbox.lithic.com" },
    "live",
  );
  assert.equal(!sandboxInLive.ok && sandboxInLive.field, "base_url");
  const liveInTest = checkLithicSettings({ ...base, base_url: "https://api.lithic.com" }, "test");
  assert.equal(!liveInTest.ok && liveInTest.field, "base_url");
  const badMcc = checkLithicSettings({
    ...base,
    base_url: "https://api.lithic.com",
    allowed_mccs: ["75311"],
  }, "live");
  assert.equal(!badMcc.ok && badMcc.field, "allowed_mccs.0");
  const tooLong = checkLithicSettings({
    ...base,
    base_url: "https://api.lithic.com",
    card_valid_days: 366,
  }, "live");
  assert.equal(!tooLong.ok && tooLong.field, "card_valid_days");
});
