/** The pure payout policy: retry or re-offer after a failure, and an offer's next timed step. */
import assert from "node:assert/strict";
import { afterFailure, nextOfferStep, OFFER_REMINDERS_BEFORE_MS } from "../lib/payouts/policy.ts";

const DAY_MS = 86_400_000;

Deno.test("after a failure: retried while the policy allows the reason and retries remain, else re-offered", () => {
  const policy = { retryMax: 2, retryReasons: ["rail_unavailable"] };
  const table: [string, number, "retry" | "reoffer"][] = [
    ["rail_unavailable", 0, "retry"],
    ["rail_unavailable", 1, "retry"], // at the limit: the second retry
    ["rail_unavailable", 2, "reoffer"], // one past it
    ["R03", 0, "reoffer"],
    ["card_declined", 0, "reoffer"],
    ["rail_not_configured", 0, "reoffer"],
  ];
  for (const [reason, retriesSoFar, expected] of table) {
    assert.equal(afterFailure(policy, reason, retriesSoFar), expected, `${reason} ${retriesSoFar}`);
  }
  assert.equal(afterFailure({ retryMax: 0, retryReasons: ["R03"] }, "R03", 0), "reoffer");
});

Deno.test("an offer's next step: a week before, a day before, then the expiry", () => {
  assert.deepEqual(OFFER_REMINDERS_BEFORE_MS, [7 * DAY_MS, DAY_MS]);
  const offeredAt = Date.UTC(2026, 0, 5, 15);
  const expiresAt = offeredAt + 90 * DAY_MS;
  const table: [number, ReturnType<typeof nextOfferStep>][] = [
    [offeredAt, { kind: "remind", dueAt: expiresAt - 7 * DAY_MS }],
    [expiresAt - 7 * DAY_MS - 1, { kind: "remind", dueAt: expiresAt - 7 * DAY_MS }],
    [expiresAt - 7 * DAY_MS, { kind: "remind", dueAt: expiresAt - DAY_MS }],
    [expiresAt - DAY_MS, { kind: "expire", dueAt: expiresAt }],
  ];
  for (const [after, expected] of table) {
    assert.deepEqual(nextOfferStep(expiresAt, after), expected, new Date(after).toISOString());
  }
  // An offer shorter than a week gets only the reminders that still lie ahead.
  assert.deepEqual(nextOfferStep(offeredAt + 3 * DAY_MS, offeredAt), {
    kind: "remind",
    dueAt: offeredAt + 2 * DAY_MS,
  });
});
