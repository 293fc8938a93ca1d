/**
 * Checks in the HTTP fixture's test environment: Acme pays payees by postal or digital check
 * (chosen as the portal would, through selectMethod), and the sandbox bank takes the cutoff's
 * positive-pay file at once.
 */
import assert from "node:assert/strict";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { api, payee } from "./api_helpers.ts";
import { fundAcmeAuto, type HttpFixture } from "./http_fixture.ts";

/** The postal address a check payee enters. */
export const CHECK_ADDRESS = {
  address_one: "12 Elm Street",
  city: "Austin",
  state: "TX",
  zip_code: "73301",
  postage: "FC",
};

/**
 * A disbursement of Acme (test) whose payees chose `methods` (2 postal, 5 digital), in order;
 * returns the payouts' ids after the submissions and the cutoff ran.
 */
export async function acmeChecks(
  f: HttpFixture,
  uuid: string,
  payees: readonly { amount: number; method: 2 | 5 }[],
): Promise<string[]> {
  await fundAcmeAuto(f, 100_000_00);
  const created = await api(f, "POST", "/api/disbursements", {
    disbursement_uuid: uuid,
    large_disbursement: false,
    payees: payees.map((p, i) =>
      payee(`${uuid}-${i}`, p.amount, { allowed_payment_method_ids: [2, 5] })
    ),
  });
  assert.equal(created.status, 201, await created.clone().text());
  await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 1 });
  const database = f.deps.databases.test;
  const ids: string[] = [];
  for (const [i, p] of payees.entries()) {
    const { rows } = await database.readClient.execute({
      sql: `SELECT p.id FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id
            WHERE d.external_uuid = ? AND p.payee_uuid = ?`,
      args: [uuid, `${uuid}-${i}`],
    });
    const payoutId = String(rows[0].id);
    const selected = await database.writer.write((tx) =>
      selectMethod(tx, payoutId, {
        paymentMethodId: p.method,
        details: { zip: CHECK_ADDRESS.zip_code },
        kept: p.method === 2 ? CHECK_ADDRESS : { email: `${uuid}-${i}@example.test` },
      }, f.clock.now())
    );
    assert.ok(selected.ok, selected.ok ? "" : selected.message);
    ids.push(payoutId);
  }
  await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 60 });
  return ids;
}
