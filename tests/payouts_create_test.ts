import assert from "node:assert/strict";
import { createDisbursement, loadPayout, recordPayoutEvent } from "../lib/payouts/store.ts";
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

Deno.test("create: the created event's data is what the payout's other events read (rowids, documents, the disbursement's status)", async () => {
  const f = await openMoneyFixture();
  try {
    await f.fund(100_000);
    await f.database.writer.write(async (tx) => {
      for (
        const [id, type, oneTime] of [["doc_all", 1, 0], ["doc_mine", 4, 1], ["doc_ach", 2, 0]]
      ) {
        await tx.execute({
          sql: `INSERT INTO documents (id, company_id, name, doc_type_id, one_time_use, sha256,
                  size_bytes, content, created_at) VALUES (?, ?, ?, ?, ?, 'x', 1, x'00', ?)`,
          args: [id, f.companyId, id, type, oneTime, f.now()],
        });
      }
    });
    const payee = {
      first_name: "Ada",
      last_name: "Lovelace",
      phone: "+15555550100",
      address_one: "1 Main St",
      city: "Springfield",
      state: "IL",
      zip_code: "62701",
      payee_type_id: 1,
      email: "ada@example.test",
    };
    const created = await f.database.writer.write((tx) =>
      createDisbursement(tx, {
        companyId: f.companyId,
        lineId: f.lineId,
        kind: "disbursement",
        externalUuid: "dis-events",
        requestFingerprint: "x",
        largeDisbursement: false,
        claimId: "CLAIM-1",
        memo: "two payees",
        payouts: [
          {
            payeeUuid: "a",
            amountCents: 1_000,
            allowedPaymentMethodIds: [1, 2],
            payee,
            customDocumentUuids: ["doc_mine"],
            fieldValues: [{ name: "policy", value: "P-1" }],
          },
          { payeeUuid: "b", amountCents: 2_000, allowedPaymentMethodIds: [2], payee: {} },
        ],
      }, f.now())
    );
    assert.ok(created.ok);
    const shown = [2, 1]; // the company's document, and payee a's own
    for (const [i, payout] of created.value.payouts.entries()) {
      // The same payout's event written afterwards reads its context from the database.
      await f.database.writer.write((tx) =>
        recordPayoutEvent(tx, payout.id, "created", "read again", f.now())
      );
      const { rows } = await f.database.readClient.execute({
        sql: "SELECT data FROM events WHERE payout_id = ? ORDER BY rowid",
        args: [payout.id],
      });
      assert.equal(rows.length, 2);
      const [atCreate, readAgain] = rows.map((row) => JSON.parse(String(row.data)));
      assert.ok(atCreate.ledger_transaction_id !== null);
      assert.equal(atCreate.documents_shown, shown[i]);
      assert.equal(atCreate.disbursement_status, "created");
      assert.equal(readAgain.reason, "read again");
      assert.equal(
        JSON.stringify({ ...atCreate, reason: null, ledger_transaction_id: null }),
        JSON.stringify({ ...readAgain, reason: null, ledger_transaction_id: null }),
      );
    }
  } finally {
    await f.close();
  }
});
