/**
 * Shared fixtures of the obligations tests: a company's settings, a payout nobody chooses, and a
 * state's report written and remitted through the admin commands.
 */
import assert from "node:assert/strict";
import { createDisbursement } from "../lib/payouts/store.ts";
import type { MoneyFixture } from "./money_core_helpers.ts";
import type { adminCall } from "./operator_helpers.ts";
import { withTempDir } from "./helpers.ts";
import { readNaupaStrictly, type ReadReport } from "./naupa_reader.ts";

/** The payee's address on file (Illinois). */
export const ADDRESS = {
  address_one: "9 Elm St",
  city: "Springfield",
  state: "IL",
  zip_code: "62701",
};

/** Sets columns of the fixture company's obligation settings. */
export async function configure(
  m: MoneyFixture,
  settings: Readonly<Record<string, string | number | null>>,
): Promise<void> {
  const columns = Object.keys(settings);
  await m.database.writer.write((tx) =>
    tx.execute({
      sql: `UPDATE companies SET ${columns.map((c) => `${c} = ?`).join(", ")} WHERE id = ?`,
      args: [...Object.values(settings), m.companyId],
    })
  );
}

/**
 * A payout offering ACH and a check to a payee who does nothing (its offer sent), by default
 * $500.00 to Pat Doe at ADDRESS; returns its id.
 */
export async function owe(
  m: MoneyFixture,
  payeeUuid: string,
  options: {
    amountCents?: number;
    payee?: Readonly<Record<string, string>>;
    payBy?: string;
  } = {},
): Promise<string> {
  const created = await m.database.writer.write((tx) =>
    createDisbursement(tx, {
      companyId: m.companyId,
      lineId: m.lineId,
      kind: "disbursement",
      externalUuid: `D-${payeeUuid}`,
      requestFingerprint: payeeUuid,
      largeDisbursement: false,
      payBy: options.payBy,
      payouts: [{
        payeeUuid,
        amountCents: options.amountCents ?? 50_000,
        allowedPaymentMethodIds: [1, 2],
        payee: {
          email: `${payeeUuid}@example.test`,
          phone: "+15125550100",
          first_name: "Pat",
          last_name: "Doe",
          ...(options.payee ?? ADDRESS),
        },
      }],
    }, m.now())
  );
  if (!created.ok) throw new Error(created.message);
  await m.settle();
  return created.value.payouts[0].id;
}

/**
 * `unclaimed:report` of one state for 2026 in test, its file read back strictly, then
 * `unclaimed:remit` of it; answers the file as read and the remittance's result.
 */
export async function reportAndRemit(
  call: ReturnType<typeof adminCall>,
  tin: string,
  state: string,
): Promise<{ read: ReadReport; remitted: Record<string, unknown> }> {
  return await withTempDir(async (dir) => {
    const out = `${dir}/${state}-2026.txt`;
    const flags = { tin, environment: "test", state, "report-year": "2026", out };
    const reported = await call("unclaimed:report", flags);
    assert.equal(reported.status, 200, JSON.stringify(reported.body));
    const read = readNaupaStrictly(await Deno.readTextFile(out));
    const remitted = await call("unclaimed:remit", {
      report: reported.body.result.report_id,
      environment: "test",
    });
    assert.equal(remitted.status, 200, JSON.stringify(remitted.body));
    return { read, remitted: remitted.body.result };
  });
}
