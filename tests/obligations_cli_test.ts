/**
 * The unclaimed-property commands through the admin endpoint, on a /v1 payout the sandbox clock
 * drives: obligations:set, unclaimed:list, unclaimed:report (the file the strict reader takes),
 * unclaimed:remit (at once in test, with its ledger effect, its event on /v1 and the portal's
 * page), unclaimed:dormancy-set; and in live the remittance waits for a second admin.
 */
import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import { fundAcmeAuto, withHttpFixture } from "./http_fixture.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";
import { withTempDir } from "./helpers.ts";
import { lastMessage, pathOf, PortalBrowser, v1, verify } from "./portal_helpers.ts";
import { readNaupaStrictly } from "./naupa_reader.ts";
import { consoleAs, textOf } from "./console_helpers.ts";

Deno.test("test: obligations:set, then a payee who never chooses is listed, reported, remitted and told on the portal to claim from the state", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const ana = await makeOperator(f.deps, { email: "ana@ops.test", role: "admin" }, now);
    const call = adminCall(app, ana.token);
    const set = await call("obligations:set", {
      tin: f.cast.acme.tin,
      "offer-expiry": "hold",
      "holder-state": "DE",
      "sandbox-dormancy-days": "1",
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.deepEqual(set.body.result, {
      tin: f.cast.acme.tin,
      offer_expiry: "hold",
      pay_by_days: null,
      holder_state: "DE",
      sandbox_dormancy_days: 1,
    });

    await fundAcmeAuto(f, 100_000);
    const payee = {
      id: "pat",
      name: "Pat Doe",
      email: "pat@example.test",
      address: { line1: "9 Elm St", city: "Springfield", state: "IL", postal_code: "62701" },
    };
    assert.equal((await v1(f, "POST", "/v1/payees", payee)).status, 201);
    const created = await v1(f, "POST", "/v1/disbursements", {
      amount: 120,
      claim_id: "CLM-77",
      payee: { id: "pat" },
      modalities: ["ach", "check"],
      pay_by: "2026-01-10",
    });
    const { id } = await created.json() as { id: string };
    assert.equal(created.status, 201);
    // Past the pay_by (2026-01-10 00:00 UTC) and the sandbox's one-day dormancy.
    await v1(f, "POST", "/v1/sandbox/clock/advance", { seconds: 6 * 86_400 });

    const listed = await call("unclaimed:list", { tin: f.cast.acme.tin, environment: "test" });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const [item] = listed.body.result.items;
    assert.deepEqual(
      [
        item.state,
        item.property_type,
        item.amount,
        item.dormancy_days,
        item.report_year,
        item.status,
      ],
      ["IL", "IN01", 120, 1, 2026, "modality_offered"],
    );
    assert.deepEqual(item.notices.map((n: { channel: string }) => n.channel), ["email", "letter"]);
    // The console shows the same list.
    const viewer = (await consoleAs(f, { email: "vic@ops.test", role: "viewer" })).browser;
    const page = textOf((await viewer.get("/console/unclaimed?env=test")).html);
    assert.match(
      page,
      new RegExp(
        `IL .*${item.dormant_on}.*${item.payout_id}.*Pat Doe.*\\$120\\.00.*IN01.*email sent.*letter sent.*2026`,
      ),
    );
    const notice = await lastMessage(f, "pat@example.test", /go to the state/);

    await withTempDir(async (dir) => {
      const letters = await call("unclaimed:letters", {
        tin: f.cast.acme.tin,
        environment: "test",
        out: `${dir}/letters.pdf`,
      });
      assert.equal(letters.status, 200, JSON.stringify(letters.body));
      assert.equal(letters.body.result.letters, 1);
      const pdf = await Deno.readFile(`${dir}/letters.pdf`);
      assert.equal(new TextDecoder().decode(pdf.slice(0, 5)), "%PDF-");
      const out = `${dir}/il-2026.txt`;
      const reported = await call("unclaimed:report", {
        tin: f.cast.acme.tin,
        environment: "test",
        state: "il",
        "report-year": "2026",
        out,
      });
      assert.equal(reported.status, 200, JSON.stringify(reported.body));
      const result = reported.body.result;
      assert.deepEqual(
        [result.state, result.report_year, result.properties, result.records, result.amount],
        ["IL", 2026, 1, 3, 120],
      );
      const read = readNaupaStrictly(await Deno.readTextFile(out));
      assert.equal(read.totals.reportedCents, 12_000);
      assert.equal(read.holder.taxId, f.cast.acme.tin);

      const badYear = await call("unclaimed:report", {
        tin: f.cast.acme.tin,
        environment: "test",
        state: "IL",
        "report-year": "26",
        out,
      });
      assert.equal(badYear.status, 400);

      const remitted = await call("unclaimed:remit", {
        report: result.report_id,
        environment: "test",
      });
      assert.equal(remitted.status, 200, JSON.stringify(remitted.body));
      assert.deepEqual(
        [remitted.body.result.status, remitted.body.result.escheated, remitted.body.result.amount],
        ["remitted", 1, 120],
      );
    });
    const balances = await f.deps.databases.test.readClient.execute({
      sql:
        "SELECT code, balance_cents FROM ledger_accounts WHERE line_id = ? AND code IN ('reserved', 'unclaimed_remitted') ORDER BY code",
      args: [f.cast.acme.autoLineId],
    });
    assert.deepEqual(balances.rows.map((row) => [row.code, Number(row.balance_cents)]), [
      ["reserved", 0],
      ["unclaimed_remitted", 12_000],
    ]);
    const shown = await (await v1(f, "GET", `/v1/disbursements/${id}`)).json() as {
      status: string;
      timeline: { status: string; detail?: string }[];
    };
    assert.equal(shown.status, "escheated");
    assert.match(String(shown.timeline.at(-1)?.detail), /^remitted to IL as unclaimed property/);
    const events = await (await v1(f, "GET", "/v1/events?type=disbursement.escheated")).json() as {
      data: unknown[];
    };
    assert.equal(events.data.length, 1);

    // The payee comes back through the notice's link: the page says to claim from Illinois.
    const browser = new PortalBrowser(f);
    const link = pathOf(notice.links[0]);
    await verify(browser, link, "pat@example.test");
    await browser.get(link);
    assert.match(browser.lastHtml, /sent it to the state of IL as unclaimed property/);

    const dormancy = await call("unclaimed:dormancy-set", {
      tin: f.cast.acme.tin,
      state: "tx",
      "property-type": "IN01",
      days: "1095",
    });
    assert.deepEqual(dormancy.body.result, {
      tin: f.cast.acme.tin,
      state: "TX",
      property_type: "IN01",
      days: 1095,
    });
    const badType = await call("unclaimed:dormancy-set", {
      tin: f.cast.acme.tin,
      state: "TX",
      "property-type": "CK99",
      days: "10",
    });
    assert.equal(badType.status, 400);
  }, { SANDBOX_INBOX: "1" });
});

Deno.test("live: unclaimed:remit waits for a second admin, who remits the report", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const ana = await makeOperator(f.deps, { email: "ana@ops.test", role: "admin" }, now);
    const ben = await makeOperator(f.deps, { email: "ben@ops.test", role: "admin" }, now);
    // A report of nothing owed any more, written before: its remittance moves nothing but itself.
    await f.deps.databases.live.writer.write((tx) =>
      tx.execute({
        sql: `INSERT INTO unclaimed_reports (id, company_id, state, report_year, payout_ids,
                total_cents, sha256, status, created_at)
              VALUES ('ucr_live', ?, 'IL', 2026, '[]', 0, ?, 'written', ?)`,
        args: [f.cast.acme.id, "0".repeat(64), now],
      })
    );
    const asked = await adminCall(app, ana.token)("unclaimed:remit", { report: "ucr_live" });
    assert.equal(asked.status, 200, JSON.stringify(asked.body));
    assert.deepEqual(
      [asked.body.result.status, asked.body.result.kind, asked.body.result.report_id],
      ["pending_approval", "unclaimed_report.remit", "ucr_live"],
    );
    const status = async () =>
      String(
        (await f.deps.databases.live.readClient.execute(
          "SELECT status FROM unclaimed_reports WHERE id = 'ucr_live'",
        )).rows[0].status,
      );
    assert.equal(await status(), "written", "nothing moves before the approval");
    const approved = await adminCall(app, ben.token)("approvals:approve", {
      id: asked.body.result.approval_id,
    });
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.equal(await status(), "remitted");
    const missing = await adminCall(app, ana.token)("unclaimed:remit", { report: "ucr_none" });
    assert.equal(missing.status, 404, JSON.stringify(missing.body));
  });
});

Deno.test("obligations:show names the dormancy periods: every state's default, the built-in states' own and an admin's over them, by state and property type", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const ana = await makeOperator(f.deps, { email: "ana@ops.test", role: "admin" }, f.clock.now());
    const call = adminCall(app, ana.token);
    for (const [state, type, days] of [["TX", "IN01", "730"], ["DE", "IN07", "2555"]]) {
      const set = await call("unclaimed:dormancy-set", {
        tin: f.cast.acme.tin,
        state,
        "property-type": type,
        days,
      });
      assert.equal(set.status, 200, JSON.stringify(set.body));
    }
    const shown = await call("obligations:show", { tin: f.cast.acme.tin });
    assert.equal(shown.status, 200, JSON.stringify(shown.body));
    const claim = "Individual policy benefits or claim payments";
    const other = "Other amounts due under policy terms";
    const de = "Del. Code tit. 12, §1133: five years for property without a shorter period";
    const fl = "Fla. Stat. §717.102: five years after the property became payable";
    assert.deepEqual(shown.body.result, {
      tin: f.cast.acme.tin,
      offer_expiry: "cancel",
      pay_by_days: null,
      holder_state: null,
      sandbox_dormancy_days: null,
      dormancy_default_days: 1095,
      dormancy_default_source:
        "Uniform Unclaimed Property Act (1995) §2 and Revised Uniform Unclaimed Property Act (2016) §201: three years for most property, insurance claim payments included",
      dormancy_periods: [
        { state: "DE", property_type: "IN01", property_type_name: claim, days: 1825, source: de },
        {
          state: "DE",
          property_type: "IN07",
          property_type_name: other,
          days: 2555,
          source: "set by an admin",
        },
        { state: "FL", property_type: "IN01", property_type_name: claim, days: 1825, source: fl },
        { state: "FL", property_type: "IN07", property_type_name: other, days: 1825, source: fl },
        {
          state: "TX",
          property_type: "IN01",
          property_type_name: claim,
          days: 730,
          source: "set by an admin",
        },
      ],
    });
  });
});
