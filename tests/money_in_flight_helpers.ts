/** What the money-in-flight tests share: a payout on each surface, funded, by its id. */
import { api, payee } from "./api_helpers.ts";
import { v1 } from "./portal_helpers.ts";
import { fundAcmeAuto, type HttpFixture } from "./http_fixture.ts";

/** One statement on the test database, written in its own unit; its rows. */
export async function sql(f: HttpFixture, statement: string, ...args: (string | number | null)[]) {
  return (await f.deps.databases.test.writer.write((tx) => tx.execute({ sql: statement, args })))
    .rows;
}

/** The id of the payout `where` names. */
export const payoutOf = async (f: HttpFixture, where: string, arg: string) =>
  String((await sql(f, `SELECT id FROM payouts WHERE ${where}`, arg))[0].id);

/**
 * Acme's line funded with $1,000.00, a /v1 disbursement of $100.00 (claim C-1, payee `noaction`)
 * and a Surface A one of $20.00 (CLM-1, payee p-a): their ids and payouts.
 */
export async function payoutOnEachSurface(f: HttpFixture): Promise<{
  readonly v1Disbursement: string;
  readonly v1Payout: string;
  readonly apiPayout: string;
}> {
  await fundAcmeAuto(f, 100_000);
  await v1(f, "POST", "/v1/payees", { id: "noaction", email: "n@example.test" });
  const created = await (await v1(f, "POST", "/v1/disbursements", {
    amount: 100,
    claim_id: "C-1",
    payee: { id: "noaction" },
    modalities: ["ach"],
  })).json() as { id: string };
  await api(f, "POST", "/api/disbursements", {
    disbursement_uuid: "CLM-1",
    large_disbursement: false,
    payees: [payee("p-a", 20)],
  });
  return {
    v1Disbursement: created.id,
    v1Payout: await payoutOf(f, "disbursement_id = ?", created.id),
    apiPayout: await payoutOf(f, "payee_uuid = ?", "p-a"),
  };
}
