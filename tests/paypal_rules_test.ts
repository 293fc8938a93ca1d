/** The PayPal rail's pure rules: the item-state table, timing, amounts and PayPal's duplicate refusal. */
import assert from "node:assert/strict";
import {
  deniedItemAction,
  itemAction,
  nextPaypalCutoff,
  PAYPAL_BATCH_INTERVAL_MS,
  paypalAmountValue,
  pollDelayMs,
} from "../lib/paypal/rules.ts";
import { duplicateBatchOf } from "../lib/paypal/client.ts";

Deno.test("item states map as issue 19's table says, for an entry still sent", () => {
  const table: [string, string | null, ReturnType<typeof itemAction>][] = [
    ["SUCCESS", null, { kind: "complete" }],
    ["UNCLAIMED", "RECEIVER_UNREGISTERED", { kind: "wait" }],
    ["RETURNED", "RECEIVER_UNREGISTERED", { kind: "fail", reason: "unclaimed_returned" }],
    ["FAILED", "RECEIVER_ACCOUNT_LOCKED", { kind: "fail", reason: "RECEIVER_ACCOUNT_LOCKED" }],
    ["BLOCKED", "RISK_DECLINE", { kind: "fail", reason: "RISK_DECLINE" }],
    ["DENIED", null, { kind: "fail", reason: "denied" }],
    ["FAILED", "INSUFFICIENT_FUNDS", { kind: "retry_for_funds" }],
    ["HELD", null, { kind: "wait" }],
    ["PENDING", null, { kind: "wait" }],
    ["ONHOLD", null, { kind: "wait" }],
    ["NEW", null, { kind: "wait" }],
    ["REFUNDED", null, { kind: "fail", reason: "refunded" }],
  ];
  for (const [status, errorName, action] of table) {
    assert.deepEqual(itemAction(status, errorName, "sent"), action, status);
  }
});

Deno.test("after completion only a refund moves anything (a late return); a failed entry is settled", () => {
  assert.deepEqual(itemAction("REFUNDED", null, "completed"), { kind: "late_return" });
  for (const status of ["SUCCESS", "FAILED", "RETURNED", "UNCLAIMED"]) {
    assert.deepEqual(itemAction(status, null, "completed"), { kind: "wait" }, status);
    assert.deepEqual(itemAction(status, null, "failed"), { kind: "wait" }, status);
  }
});

Deno.test("an item of a batch PayPal denied fails paypal_batch_denied while its entry is sent; a settled entry is left as it is", () => {
  assert.deepEqual(deniedItemAction("sent"), { kind: "fail", reason: "paypal_batch_denied" });
  for (const entry of ["completed", "failed", "other"] as const) {
    assert.deepEqual(deniedItemAction(entry), { kind: "wait" }, entry);
  }
});

Deno.test("cutoffs fall on five-minute marks; polls back off to daily", () => {
  const t = Date.UTC(2026, 0, 5, 15, 0);
  assert.equal(nextPaypalCutoff(t), t);
  assert.equal(nextPaypalCutoff(t + 1), t + PAYPAL_BATCH_INTERVAL_MS);
  assert.equal(nextPaypalCutoff(t + PAYPAL_BATCH_INTERVAL_MS - 1), t + PAYPAL_BATCH_INTERVAL_MS);
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 100].map(pollDelayMs),
    [60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000, 86_400_000, 86_400_000],
  );
});

Deno.test("amounts are PayPal's value strings from whole cents", () => {
  assert.deepEqual([1, 10, 100, 12_345, 100_000_000].map(paypalAmountValue), [
    "0.01",
    "0.10",
    "1.00",
    "123.45",
    "1000000.00",
  ]);
  for (const bad of [0, -1, 1.5]) assert.throws(() => paypalAmountValue(bad));
});

Deno.test("PayPal's refusal of a repeated sender_batch_id names the original batch; other refusals do not", () => {
  const duplicate = {
    name: "USER_BUSINESS_ERROR",
    message: "User business error.",
    debug_id: "abc",
    details: [{
      field: "SENDER_BATCH_ID",
      location: "body",
      issue: "Batch with given sender_batch_id already exists",
    }],
    links: [{ href: "https://api-m.paypal.com/v1/payments/payouts/5UXD2E8A7EBQJ", rel: "self" }],
  };
  assert.equal(duplicateBatchOf(duplicate), "5UXD2E8A7EBQJ");
  assert.equal(duplicateBatchOf({ ...duplicate, links: [] }), null);
  assert.equal(duplicateBatchOf({ ...duplicate, details: [{ field: "items[0].receiver" }] }), null);
  assert.equal(duplicateBatchOf({ name: "VALIDATION_ERROR", message: "Invalid request" }), null);
  assert.equal(duplicateBatchOf({ name: "INSUFFICIENT_FUNDS", message: "add money" }), null);
});
