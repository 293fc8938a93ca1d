import assert from "node:assert/strict";
import { loadPayout } from "../lib/payouts/store.ts";
import { openMoneyFixture } from "./money_core_helpers.ts";

Deno.test("create: each payout it answers is its row as committed (held, and waiting for funds)", async () => {
  const f = await openMoneyFixture();
  try {
    await f.fund(50_000);
    const held = await f.create([
      { payeeUuid: "a", amountCents: 12_345, allowedPaymentMethodIds: [1, 2] },
      { payeeUuid: "b", amountCents: 100, email: "b@example.test" },
    ]);
    assert.ok(held.ok);
    const waiting = await f.create({ payeeUuid: "c", amountCents: 90_000 }, { large: true });
    assert.ok(waiting.ok);
    const answered = [...held.value.payouts, ...waiting.value.payouts];
    assert.deepEqual(answered.map((p) => p.status), ["created", "created", "pending_funds"]);
    for (const payout of answered) {
      assert.deepEqual(payout, await loadPayout(f.database.readClient, payout.id));
    }
  } finally {
    await f.close();
  }
});
