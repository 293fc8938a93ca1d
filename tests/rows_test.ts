/**
 * Typed rows (db/rows.ts): a mapper checks each column against the schema once and names table
 * and column when a value is wrong; nulls, booleans, JSON and blobs map in one place. And the
 * ledger's kinds: every kind the code posts is one the tie-out classifies, in the category its
 * transfers fit, so a new kind cannot silently fall out of the tie-out.
 */
import assert from "node:assert/strict";
import { getTableColumns, is } from "drizzle-orm";
import { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Database } from "../db/client.ts";
import {
  boolean,
  type ColumnReader,
  columnsOf,
  integer,
  json,
  multiRowInserts,
  notNull,
  nullable,
  oneOf,
  orDefault,
  renamed,
  rowMapper,
  RowTypeError,
  valuesPlaceholders,
} from "../db/rows.ts";
import * as schema from "../db/schema.ts";
import {
  addFunds,
  clearAchFunding,
  recordAchDebitSent,
  returnAchFunding,
  returnClearedAchFunding,
} from "../lib/funding/store.ts";
import {
  listRailExceptions,
  recordEntryException,
  resolveRailException,
} from "../lib/rails/exceptions.ts";
import { isLedgerTransactionKind, ledgerTransactionKinds } from "../lib/ledger/postings.ts";
import { heldAccounts, tieOutCategories, type TieOutCategory } from "../lib/ledger/tieout.ts";
import type { LedgerAccountCode, Transfer } from "../lib/ledger/types.ts";
import { payoutStatuses } from "../lib/payouts/states.ts";
import { applyMove, createDisbursement, ledgerKindOf, loadPayout } from "../lib/payouts/store.ts";
import {
  lateReturn,
  type MoveKind,
  type PayoutMove,
  transition,
} from "../lib/payouts/transition.ts";
import { openTempDatabase, withTempDir } from "./helpers.ts";

const payout = columnsOf(schema.payouts);

const refusal = (message: string) => (error: unknown) =>
  error instanceof RowTypeError && error.message === message;

Deno.test("a column of the wrong type is refused, naming table and column", () => {
  const toMoney = rowMapper({ id: payout.id, amountCents: payout.amountCents });
  const cases: [Record<string, unknown>, string][] = [
    [
      { id: "po_1", amount_cents: "1200" },
      "payouts.amount_cents holds a string of 4 characters, expected an integer",
    ],
    [
      { id: "po_1", amount_cents: 12.5 },
      "payouts.amount_cents holds number 12.5, expected an integer",
    ],
    [
      { id: "po_1", amount_cents: 12n },
      "payouts.amount_cents holds bigint 12, expected an integer",
    ],
    [{ id: "po_1", amount_cents: null }, "payouts.amount_cents holds null, expected an integer"],
    [{ id: 7, amount_cents: 1200 }, "payouts.id holds number 7, expected text"],
    [
      { id: "po_1" },
      "payouts.amount_cents is not in the row: the query does not select it",
    ],
  ];
  for (const [row, message] of cases) assert.throws(() => toMoney(row), refusal(message));
  assert.deepEqual(toMoney({ id: "po_1", amount_cents: 1200 }), {
    id: "po_1",
    amountCents: 1200,
  });
});

Deno.test("each kind of column refuses what the schema does not allow", () => {
  const delivery = columnsOf(schema.webhookDeliveries);
  const document = columnsOf(schema.documents);
  const cases: [() => unknown, string][] = [
    [
      () => rowMapper({ status: payout.status })({ status: "settled" }),
      `payouts.status holds "settled", expected one of ${payoutStatuses.join(", ")}`,
    ],
    [
      () => rowMapper({ manual: delivery.manual })({ manual: 2 }),
      "webhook_deliveries.manual holds number 2, expected 0 or 1",
    ],
    [
      () => rowMapper({ content: document.content })({ content: "%PDF" }),
      "documents.content holds a string of 4 characters, expected a blob",
    ],
    [
      () =>
        rowMapper({ ids: json<number[]>(payout.allowedPaymentMethodIds, "array") })({
          allowed_payment_method_ids: '{"a":1}',
        }),
      "payouts.allowed_payment_method_ids holds a string of 7 characters, expected JSON array text",
    ],
    [
      () =>
        rowMapper({ settings: json<object>(payout.paymentMethodSettings, "object") })({
          payment_method_settings: "{not json",
        }),
      "payouts.payment_method_settings holds a string of 9 characters, expected JSON object text",
    ],
    [
      () =>
        rowMapper({ company: renamed(columnsOf(schema.companies).name, "company_name") })({
          company_name: null,
        }),
      "companies.name (as company_name) holds null, expected text",
    ],
    [
      () => rowMapper({ type: notNull(columnsOf(schema.events).type) })({ type: null }),
      "events.type holds null, expected text, not null",
    ],
    [
      () =>
        rowMapper({ kind: oneOf(columnsOf(schema.ledgerTransactions).kind, ["payout.hold"]) })({
          kind: "payout.settled",
        }),
      'ledger_transactions.kind holds "payout.settled", expected one of payout.hold',
    ],
    [
      () => rowMapper({ n: integer("ledger_entries", "n") })({ n: "3" }),
      "ledger_entries.n holds a string of 1 character, expected an integer",
    ],
  ];
  for (const [map, message] of cases) assert.throws(map, refusal(message));
});

Deno.test("a refused text value is described by its length, never shown", () => {
  const toMoney = rowMapper({ amountCents: payout.amountCents });
  assert.throws(
    () => toMoney({ amount_cents: "alice@example.test" }),
    (error: Error) => !error.message.includes("alice") && /18 characters/.test(error.message),
  );
});

Deno.test("nulls map to null, booleans from 0/1, JSON parsed, blobs as bytes", () => {
  const delivery = columnsOf(schema.webhookDeliveries);
  const toRow = rowMapper({
    payeeId: payout.payeeId,
    email: payout.email,
    paymentMethodId: payout.paymentMethodId,
    allowed: json<number[]>(payout.allowedPaymentMethodIds, "array"),
    details: json<Record<string, string>, string | null>(payout.methodDetails, "object"),
    detailsOrEmpty: orDefault(
      json<Record<string, string>, string | null>(renamed(payout.methodDetails, "kept"), "object"),
      () => ({}),
    ),
    manual: delivery.manual,
    language: nullable(columnsOf(schema.payees).language),
    content: columnsOf(schema.documents).content,
    linkSent: boolean("portal_links", "link_sent"),
  });
  const bytes = new Uint8Array([37, 80, 68, 70]);
  const stored = {
    payee_id: null,
    email: "payee@example.test",
    payment_method_id: null,
    allowed_payment_method_ids: "[1,4]",
    method_details: null,
    kept: null,
    manual: 1,
    language: null,
    content: bytes.slice().buffer,
    link_sent: 0,
  };
  const first = toRow(stored);
  assert.deepEqual(first, {
    payeeId: null,
    email: "payee@example.test",
    paymentMethodId: null,
    allowed: [1, 4],
    details: null,
    detailsOrEmpty: {},
    manual: true,
    language: null,
    content: bytes,
    linkSent: false,
  });
  assert.ok(first.content instanceof Uint8Array);
  // Every row gets its own default: one row's object is never another's.
  assert.notEqual(toRow(stored).detailsOrEmpty, first.detailsOrEmpty);
  assert.deepEqual(
    toRow({
      ...stored,
      payee_id: "payee_1",
      payment_method_id: 4,
      method_details: '{"last_four":"6789"}',
      kept: '{"scenario":"settles"}',
      manual: 0,
      language: "es",
    }),
    {
      ...first,
      payeeId: "payee_1",
      paymentMethodId: 4,
      details: { last_four: "6789" },
      detailsOrEmpty: { scenario: "settles" },
      manual: false,
      language: "es",
    },
  );
  assert.deepEqual(toRow.columns, [
    "payee_id",
    "email",
    "payment_method_id",
    "allowed_payment_method_ids",
    "method_details",
    "kept",
    "manual",
    "language",
    "content",
    "link_sent",
  ]);
});

Deno.test("every column of the schema has a reader, nullable exactly where the schema says", () => {
  const tables = (Object.values(schema) as unknown[]).filter((value): value is SQLiteTable =>
    is(value, SQLiteTable)
  );
  assert.ok(tables.includes(schema.payouts));
  for (const table of tables) {
    const declared: Record<string, { notNull: boolean }> = getTableColumns(table);
    const readers: Record<string, ColumnReader<unknown>> = columnsOf(table);
    for (const [key, reader] of Object.entries(readers)) {
      const map = rowMapper({ value: reader });
      if (declared[key].notNull) {
        assert.throws(() => map({ [reader.column]: null }), RowTypeError, reader.column);
      } else {
        assert.equal(map({ [reader.column]: null }).value, null, reader.column);
      }
    }
  }
  assert.equal(columnsOf(schema.payouts), payout, "one set of readers per table");
});

async function withLine(fn: (database: Database) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    const database = await openTempDatabase(dir);
    try {
      await database.writer.write(async (tx) => {
        await tx.execute(
          "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_1', 'Acme', '123456789', 0)",
        );
        await tx.execute(
          "INSERT INTO business_lines (id, company_id, code, created_at) VALUES ('line_1', 'co_1', 'auto', 0)",
        );
      });
      await fn(database);
    } finally {
      await database.close();
    }
  });
}

const NOW = Date.UTC(2026, 0, 5, 15);

function fund(database: Database, method: "ACH" | "WireTransfer", cents: number) {
  return database.writer.write(async (tx) => {
    const added = await addFunds(
      tx,
      {
        companyId: "co_1",
        lineId: "line_1",
        paymentMethod: method,
        amountCents: cents,
        description: "rows test",
        largeDisbursement: false,
        requestFingerprint: crypto.randomUUID(),
      },
      "test",
      NOW,
    );
    if (!added.ok) throw new Error(added.message);
    return added.value.funding.id;
  });
}

function createPayout(database: Database): Promise<string> {
  return database.writer.write(async (tx) => {
    const created = await createDisbursement(tx, {
      companyId: "co_1",
      lineId: "line_1",
      kind: "disbursement",
      externalUuid: crypto.randomUUID(),
      requestFingerprint: "rows",
      largeDisbursement: false,
      payouts: [{ payeeUuid: "p1", amountCents: 2_000, allowedPaymentMethodIds: [1] }],
    }, NOW);
    if (!created.ok) throw new Error(created.message);
    return created.value.payouts[0].id;
  });
}

Deno.test("a stored value the schema does not allow stops the payout store, naming the column", async () => {
  await withLine(async (database) => {
    await fund(database, "WireTransfer", 10_000);
    const payoutId = await createPayout(database);
    const load = () => database.writer.write((tx) => loadPayout(tx, payoutId));
    assert.equal((await load())?.heldCents, 2_000);
    // SQLite keeps what it cannot convert: text in an INTEGER column, an object where an array goes.
    await database.writer.write((tx) =>
      tx.execute({ sql: "UPDATE payouts SET held_cents = 'abc' WHERE id = ?", args: [payoutId] })
    );
    await assert.rejects(
      load(),
      refusal("payouts.held_cents holds a string of 3 characters, expected an integer"),
    );
    await database.writer.write((tx) =>
      tx.execute({
        sql: `UPDATE payouts SET held_cents = 2000, allowed_payment_method_ids = '{"1":true}'
                WHERE id = ?`,
        args: [payoutId],
      })
    );
    await assert.rejects(
      load(),
      refusal(
        "payouts.allowed_payment_method_ids holds a string of 10 characters, expected JSON array text",
      ),
    );
  });
});

/** Whether a transfer fits where the tie-out puts its kind. */
function fits(category: TieOutCategory, from: LedgerAccountCode, to: LedgerAccountCode): boolean {
  const held = (account: LedgerAccountCode) => heldAccounts.includes(account);
  switch (category) {
    case "within_held":
      return held(from) && held(to);
    case "funded":
      return from === "bank" && held(to);
    case "returned_funding":
      return held(from) && to === "bank";
    case "returned":
      return from === "bank" && held(to);
    case "paid_out":
      // Money leaves the held accounts; what an escheat held beyond the amount goes back.
      return held(from) && (!held(to) || (from === "reserved" && to === "available"));
  }
}

/** One or more steps of every move; a new move does not compile until it is listed. */
const stepsOfMove: Record<MoveKind, PayoutMove[]> = {
  release_funds: [{ kind: "release_funds", holdCents: 1_200 }],
  request_endorsement: [{ kind: "request_endorsement" }],
  endorsements_complete: [{ kind: "endorsements_complete" }],
  offer: [{ kind: "offer" }],
  select: [
    {
      kind: "select",
      paymentMethodId: 1,
      fees: { payorFeeCents: 0, payeeFeeCents: 0, serviceFeeCents: 0 },
    },
    {
      kind: "select",
      paymentMethodId: 4,
      fees: { payorFeeCents: 300, payeeFeeCents: 50, serviceFeeCents: 100 },
    },
  ],
  rail_refused: [{ kind: "rail_refused", reason: "R03" }],
  send: [{ kind: "send" }],
  complete: [{ kind: "complete" }],
  fail: [{ kind: "fail", reason: "R01" }],
  retry: [{ kind: "retry", allowed: true }],
  reoffer: [{ kind: "reoffer", holdCents: 500 }, { kind: "reoffer", holdCents: 5_000 }],
  cancel: [{ kind: "cancel" }],
  expire_offer: [{ kind: "expire_offer" }],
  hold_for_review: [{ kind: "hold_for_review" }],
  clear_review: [{ kind: "clear_review" }],
  hold_for_approval: [{ kind: "hold_for_approval" }],
  approve_payment: [{ kind: "approve_payment" }],
  reject_payment: [{ kind: "reject_payment" }],
  reject_review: [{ kind: "reject_review" }],
  fallback: [{
    kind: "fallback",
    paymentMethodId: 2,
    fees: { payorFeeCents: 200, payeeFeeCents: 0, serviceFeeCents: 100 },
  }],
  rechoose: [{
    kind: "rechoose",
    paymentMethodId: 1,
    fees: { payorFeeCents: 0, payeeFeeCents: 0, serviceFeeCents: 0 },
  }],
  hold_owed: [{ kind: "hold_owed" }],
  escheat: [{ kind: "escheat" }],
};

Deno.test("every move that posts has a ledger kind the tie-out classifies, in a category its transfers fit", () => {
  const posted = new Set<string>();
  for (const status of payoutStatuses) {
    const snapshot = {
      status,
      amountCents: 1_000,
      heldCents: 1_200,
      payorFeeCents: 100,
      payeeFeeCents: 50,
      serviceFeeCents: 100,
      fellBack: true,
      expiredUnchosen: true,
    };
    for (const step of Object.values(stepsOfMove).flat()) {
      const moved = transition(snapshot, step);
      if (!moved.ok || moved.value.transfers.length === 0) continue;
      const kind = ledgerKindOf(step.kind);
      posted.add(kind);
      const category = tieOutCategories[kind];
      for (const t of moved.value.transfers as Transfer[]) {
        assert.ok(fits(category, t.from, t.to), `${kind} (${category}) moves ${t.from} → ${t.to}`);
      }
    }
  }
  assert.deepEqual([...posted].sort(), [
    "payout.cancel",
    "payout.complete",
    "payout.escheat",
    "payout.expire_offer",
    "payout.fail",
    "payout.fallback",
    "payout.rechoose",
    "payout.reject_payment",
    "payout.release_funds",
    "payout.reoffer",
    "payout.retry",
    "payout.select",
    "payout.send",
  ]);
  // A late return is no move; its posting must fit its category too.
  const back = lateReturn({
    status: "completed",
    amountCents: 1_000,
    heldCents: 0,
    payorFeeCents: 100,
    payeeFeeCents: 50,
    serviceFeeCents: 100,
  }, { returnedBefore: false });
  assert.ok(back.ok);
  for (const t of back.value.transfers) {
    assert.ok(fits(tieOutCategories["payout.late_return"], t.from, t.to), `${t.from} → ${t.to}`);
  }
  assert.throws(() => ledgerKindOf("offer"), /payout\.offer posts transfers but is no ledger kind/);
  assert.deepEqual(Object.keys(tieOutCategories).sort(), [...ledgerTransactionKinds].sort());
  assert.equal(isLedgerTransactionKind("payout.settled"), false);
});

Deno.test("every kind the stores post lands in the tie-out in a category its entries fit", async () => {
  await withLine(async (database) => {
    const cleared = await fund(database, "ACH", 50_000);
    const returned = await fund(database, "ACH", 7_000);
    const takenBack = await fund(database, "ACH", 90_000);
    await database.writer.write(async (tx) => {
      for (const funding of [cleared, returned, takenBack]) {
        await recordAchDebitSent(tx, funding, NOW);
      }
      assert.ok((await clearAchFunding(tx, takenBack, NOW)).ok);
      assert.ok((await returnAchFunding(tx, returned, NOW)).ok);
    });
    const payoutId = await createPayout(database);
    await createPayout(database); // its hold stays: available no longer covers the return below
    await database.writer.write(async (tx) => {
      assert.ok((await applyMove(tx, payoutId, { kind: "cancel" }, NOW)).ok);
      // Taken back after it cleared, beyond what available holds: the rest is owed.
      const takenAfterClear = await returnClearedAchFunding(tx, takenBack, NOW);
      assert.ok(takenAfterClear.ok && takenAfterClear.value.shortfallCents > 0);
      await tx.execute({
        sql: `INSERT INTO rail_batch_entries (id, company_id, rail, payout_id, direction, reference,
                amount_cents, status, created_at) VALUES ('rbe_x', 'co_1', 'ach', ?, 'credit', 'r-1', 500, 'sent', ?)`,
        args: [payoutId, NOW],
      });
      await recordEntryException(tx, "rbe_x", { kind: "completed" }, "paid after cancel", NOW);
      // The next credit covers what is owed first.
      assert.ok((await clearAchFunding(tx, cleared, NOW)).ok);
    });
    await fund(database, "WireTransfer", 10_000);
    await database.writer.write(async (tx) => {
      const [exception] = await listRailExceptions(tx, { status: "open", companyIds: null }, 1);
      const resolved = await resolveRailException(tx, "test", { operator: null, origin: "cli" }, {
        exceptionId: exception.id,
        resolution: "payment_stands",
        note: null,
        companyIds: null,
      }, NOW);
      assert.ok(resolved.ok, resolved.ok ? "" : resolved.message);
    });
    const { rows } = await database.readClient.execute(
      `SELECT t.id, t.kind, a.code, e.amount_cents FROM ledger_transactions t
         JOIN ledger_entries e ON e.transaction_id = t.id JOIN ledger_accounts a ON a.id = e.account_id`,
    );
    const transaction = columnsOf(schema.ledgerTransactions);
    const toEntry = rowMapper({
      transactionId: transaction.id,
      kind: transaction.kind,
      account: columnsOf(schema.ledgerAccounts).code,
      cents: columnsOf(schema.ledgerEntries).amountCents,
    });
    const posted = new Map<
      string,
      { kind: string; from: LedgerAccountCode[]; to: LedgerAccountCode[] }
    >();
    for (const entry of rows.map(toEntry)) {
      const sides = posted.get(entry.transactionId) ?? { kind: entry.kind, from: [], to: [] };
      (entry.cents < 0 ? sides.from : sides.to).push(entry.account);
      posted.set(entry.transactionId, sides);
    }
    const kinds = new Set<string>();
    for (const { kind, from, to } of posted.values()) {
      kinds.add(kind);
      assert.ok(isLedgerTransactionKind(kind), `${kind} is not a ledger kind`);
      const category = tieOutCategories[kind];
      for (const source of from) {
        for (const destination of to) {
          assert.ok(
            fits(category, source, destination),
            `${kind} (${category}) moves ${source} → ${destination}`,
          );
        }
      }
    }
    assert.deepEqual([...kinds].sort(), [
      "funding.ach_cleared",
      "funding.ach_initiated",
      "funding.ach_returned",
      "funding.ach_returned_after_clear",
      "funding.shortfall_covered",
      "funding.wire_received",
      "payout.cancel",
      "payout.hold",
      "rail.paid_exception",
    ]);
  });
});

Deno.test("multi-row statements: a few rows' text is the same string at each call (its hash kept), a large page's is built; both bind every row", () => {
  const head = "INSERT INTO probe (a, b)";
  const statement = (count: number) => {
    const rows = Array.from({ length: count }, (_, i) => [i, `v${i}`]);
    return multiRowInserts(head, rows)[0] as { sql: string; args: unknown[] };
  };
  const [first, again] = [statement(3), statement(3)];
  assert.equal(first.sql, "INSERT INTO probe (a, b) VALUES (?, ?), (?, ?), (?, ?)");
  assert.ok(Object.is(first.sql, again.sql));
  assert.deepEqual(again.args, [0, "v0", 1, "v1", 2, "v2"]);
  assert.equal(valuesPlaceholders(2, 2), "(?, ?), (?, ?)");
  const large = statement(100);
  assert.equal(large.sql, `${head} VALUES ${Array(100).fill("(?, ?)").join(", ")}`);
  assert.equal(large.args.length, 200);
});
