/**
 * Lists a team can work with: the Payouts list's one search box (name fragment, e-mail, amount,
 * last four, claim id or Surface A disbursement_uuid, payout or disbursement id, check number,
 * trace), its CSV export round-tripping the filtered rows, and a disbursement's page by the
 * company's own id.
 */
import assert from "node:assert/strict";
import { applyMove } from "../lib/payouts/store.ts";
import { api, payee } from "./api_helpers.ts";
import { fundAcmeAuto, withHttpFixture } from "./http_fixture.ts";
import { consoleAs, createPayout, parseCsv, textOf } from "./console_helpers.ts";

const NO_LIMIT = { RATE_LIMIT_RPS: "0" };
const noFees = { payorFeeCents: 0, payeeFeeCents: 0, serviceFeeCents: 0 };

/** The payees a Payouts page lists, in its order. */
const namesIn = (html: string) =>
  [...html.matchAll(/href="\/console\/payouts\/po_[^"]*">([^<]+)<\/a>/g)].map((m) => m[1]);

Deno.test("console lists: one search box finds a payout by anything it is known by; the CSV export round-trips the filtered rows; a disbursement opens by the company's own id", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 1_000_000);
    const database = f.deps.databases.test;
    const rita = await createPayout(f, {
      key: f.cast.acmeAutoKeyTest,
      payeeId: "rita",
      email: "rita@example.test",
      name: "Rita Rivers",
      claimId: "HOME-2026-3009",
      amount: 1250,
    });
    const sam = await createPayout(f, {
      key: f.cast.acmeAutoKeyTest,
      payeeId: "sam",
      email: "sam.stone@example.test",
      name: "Sam O'Hara, Jr.",
      claimId: "CLM-2",
      amount: 77.5,
    });
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "AUTO-A-77",
      large_disbursement: false,
      payees: [payee("pat-a", 40, { first_name: "Pat", last_name: "Quill" })],
    });
    assert.equal(created.status, 201, await created.text());
    const { rows } = await database.readClient.execute(
      "SELECT id, disbursement_id FROM payouts WHERE payee_uuid = 'pat-a'",
    );
    const pat = { payoutId: String(rows[0].id), disbursementId: String(rows[0].disbursement_id) };
    const now = f.clock.now();
    await database.writer.write(async (tx) => {
      for (
        const step of [
          { kind: "offer" },
          { kind: "select", paymentMethodId: 1, fees: noFees },
        ] as const
      ) {
        const moved = await applyMove(tx, rita.payoutId, step, now, {
          methodDetails: { last_four: "6789" },
        });
        assert.equal(moved.ok, true, step.kind);
      }
      await tx.execute({
        sql: `INSERT INTO rail_batch_entries (id, company_id, rail, payout_id, reference,
                amount_cents, status, trace_number, created_at)
              VALUES ('rbe_1', ?, 'ach', ?, ?, 125000, 'queued', '091000010000042', ?)`,
        args: [f.cast.acme.id, rita.payoutId, `${rita.payoutId}-1`, now],
      });
      await tx.execute({
        sql: `INSERT INTO checks (id, company_id, check_number, payout_id, reference, kind,
                amount_cents, payee_name, status, issue_date, issued_at, created_at)
              VALUES ('chk_1', ?, 100234, ?, ?, 'postal', 7750, 'Sam', 'issued', '2026-01-05', ?, ?)`,
        args: [f.cast.acme.id, sam.payoutId, `${sam.payoutId}-1`, now, now],
      });
    });

    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const search = async (q: string) =>
      namesIn((await browser.get(`/console/payouts?q=${encodeURIComponent(q)}`)).html);
    const cases: [string, string[]][] = [
      ["rive", ["Rita Rivers"]],
      ["Rita Riv", ["Rita Rivers"]],
      ["sam.stone@", ["Sam O&#39;Hara, Jr."]],
      ["$1,250.00", ["Rita Rivers"]],
      ["77.50", ["Sam O&#39;Hara, Jr."]],
      ["6789", ["Rita Rivers"]],
      ["HOME-2026-3009", ["Rita Rivers"]],
      ["AUTO-A-77", ["Pat Quill"]],
      [pat.payoutId, ["Pat Quill"]],
      [sam.disbursementId, ["Sam O&#39;Hara, Jr."]],
      ["100234", ["Sam O&#39;Hara, Jr."]],
      ["091000010000042", ["Rita Rivers"]],
      ["nobody", []],
    ];
    for (const [q, names] of cases) assert.deepEqual(await search(q), names, q);

    // The export carries exactly the rows the list shows for its filters, in its order.
    const list = await browser.get("/console/payouts?q=a&sort=amount&dir=asc");
    assert.deepEqual(namesIn(list.html), ["Pat Quill", "Sam O&#39;Hara, Jr.", "Rita Rivers"]);
    assert.match(
      list.html,
      /href="\/console\/payouts\/export\.csv\?q=a&amp;sort=amount&amp;dir=asc&amp;env=test"/,
    );
    const exported = await browser.get(
      "/console/payouts/export.csv?q=a&sort=amount&dir=asc&env=test",
    );
    assert.equal(exported.status, 200);
    assert.equal(exported.headers.get("Content-Type"), "text/csv; charset=utf-8");
    assert.equal(
      exported.headers.get("Content-Disposition"),
      'attachment; filename="payouts-test.csv"',
    );
    const [header, ...lines] = parseCsv(exported.html);
    assert.deepEqual(header, [
      "payout_id",
      "status",
      "amount",
      "payee",
      "email",
      "method",
      "last_four",
      "claim_or_uuid",
      "disbursement_id",
      "company",
      "line",
      "last_failure",
      "created_at",
      "updated_at",
    ]);
    assert.deepEqual(
      lines.map((line) => [line[0], line[2], line[3], line[5], line[6], line[7]]),
      [
        [pat.payoutId, "40.00", "Pat Quill", "", "", "AUTO-A-77"],
        [sam.payoutId, "77.50", "Sam O'Hara, Jr.", "", "", "CLM-2"],
        [rita.payoutId, "1250.00", "Rita Rivers", "ACH", "6789", "HOME-2026-3009"],
      ],
    );
    const filtered = parseCsv(
      (await browser.get("/console/payouts/export.csv?q=6789&env=test")).html,
    );
    assert.deepEqual(filtered.slice(1).map((line) => line[0]), [rita.payoutId]);
    assert.equal((await browser.get("/console/payouts/export.csv?from=2026-02-30")).status, 400);

    // A disbursement by the company's own id: its claim id (/v1) or disbursement_uuid (/api).
    const byClaim = await browser.get("/console/disbursements/HOME-2026-3009");
    assert.equal(byClaim.status, 302);
    assert.equal(byClaim.location, `/console/disbursements/${rita.disbursementId}?env=test`);
    const byUuid = await browser.get("/console/disbursements/AUTO-A-77");
    assert.equal(byUuid.location, `/console/disbursements/${pat.disbursementId}?env=test`);
    const page = await browser.get(byUuid.location!);
    assert.equal(page.status, 200);
    assert.match(textOf(page.html), /Pat Quill/);
    assert.equal((await browser.get("/console/disbursements/HOME-0000")).status, 404);
    // Another company's operator does not find it by its id.
    const { browser: beacon } = await consoleAs(f, {
      email: "bo@ops.test",
      role: "viewer",
      companies: f.cast.beacon.id,
    });
    assert.equal((await beacon.get("/console/disbursements/HOME-2026-3009")).status, 404);
    assert.deepEqual(namesIn((await beacon.get("/console/payouts?q=6789")).html), []);
  }, NO_LIMIT);
});
