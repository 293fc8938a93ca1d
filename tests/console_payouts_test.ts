/**
 * Console Payouts and Payout detail (issue 20): the search's filters and paging, company scope
 * even by id in the URL, each role's actions (a clerk refused an admin action with 403 and nothing
 * written), the ledger effect and audit row of each change, and no secret on any page.
 */
import assert from "node:assert/strict";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { applyMove } from "../lib/payouts/store.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import {
  consoleAs,
  countRows,
  createPayout,
  fundLine,
  lineBalances,
  textOf,
} from "./console_helpers.ts";

const NO_LIMIT = { RATE_LIMIT_RPS: "0" };

/** Acme (auto line) has two payouts, Beacon one; Acme's line holds $10,000.00 before them. */
async function seed(f: HttpFixture) {
  const acme = { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId };
  const beacon = { companyId: f.cast.beacon.id, lineId: f.cast.beacon.lineId };
  await fundLine(f, acme, 1_000_000);
  await fundLine(f, beacon, 1_000_000);
  const rita = await createPayout(f, {
    key: f.cast.acmeAutoKeyTest,
    payeeId: "rita",
    email: "rita.rivers@example.test",
    name: "Rita Rivers",
    claimId: "CLM-1001",
    amount: 1250,
  });
  f.clock.advance(60_000);
  const sam = await createPayout(f, {
    key: f.cast.acmeAutoKeyTest,
    payeeId: "sam",
    email: "sam.stone@example.test",
    name: "Sam Stone",
    claimId: "CLM-2002",
    amount: 80.25,
  });
  f.clock.advance(60_000);
  const bea = await createPayout(f, {
    key: f.cast.beaconKeyTest,
    payeeId: "bea",
    email: "bea@beacon.example.test",
    name: "Bea Beacon",
    claimId: "CLM-9009",
    amount: 40,
  });
  return { acme, beacon, rita, sam, bea };
}

/** Rows of the payouts table of a page: the payee link texts, in order. */
const listedPayees = (html: string) =>
  [...html.matchAll(/<td><a href="\/console\/payouts\/[^"]+">([^<]+)<\/a>/g)].map((m) => m[1]);

Deno.test("console payouts: search by claim id, payee, disbursement, status and dates", async () => {
  await withHttpFixture(async (f) => {
    const { rita, sam } = await seed(f);
    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const all = await browser.get("/console/payouts");
    assert.equal(all.status, 200);
    assert.deepEqual(listedPayees(all.html), ["Bea Beacon", "Sam Stone", "Rita Rivers"]);
    assert.match(all.html, /\$1,250\.00/);
    assert.match(all.html, /\$80\.25/);

    const byClaim = await browser.get("/console/payouts?claim=CLM-1001");
    assert.deepEqual(listedPayees(byClaim.html), ["Rita Rivers"]);
    assert.match(byClaim.html, new RegExp(`href="/console/payouts/${rita.payoutId}\\?env=test"`));
    assert.match(byClaim.html, /name="claim" value="CLM-1001"/);
    assert.deepEqual(listedPayees((await browser.get("/console/payouts?payee=STONE")).html), [
      "Sam Stone",
    ]);
    assert.deepEqual(
      listedPayees((await browser.get("/console/payouts?payee=rita%20RIVERS")).html),
      ["Rita Rivers"],
    );
    assert.deepEqual(
      listedPayees((await browser.get("/console/payouts?payee=rita.rivers%40example")).html),
      ["Rita Rivers"],
    );
    assert.deepEqual(
      listedPayees((await browser.get(`/console/payouts?disbursement=${sam.disbursementId}`)).html),
      ["Sam Stone"],
    );
    assert.deepEqual(listedPayees((await browser.get("/console/payouts?status=created")).html), [
      "Bea Beacon",
      "Sam Stone",
      "Rita Rivers",
    ]);
    assert.deepEqual(listedPayees((await browser.get("/console/payouts?status=failed")).html), []);
    // The fixture's clock is 2026-01-05 15:00 UTC: the payouts were created that day.
    assert.equal(
      listedPayees((await browser.get("/console/payouts?from=2026-01-05&to=2026-01-05")).html)
        .length,
      3,
    );
    assert.deepEqual(
      listedPayees((await browser.get("/console/payouts?from=2026-01-06")).html),
      [],
    );
    const sorted = await browser.get("/console/payouts?sort=amount&dir=asc");
    assert.deepEqual(listedPayees(sorted.html), ["Bea Beacon", "Sam Stone", "Rita Rivers"]);
    assert.match(sorted.html, /aria-sort="ascending"/);
  }, NO_LIMIT);
});

Deno.test("console payouts: a wrong date is refused naming its field, keeping what was typed", async () => {
  await withHttpFixture(async (f) => {
    await seed(f);
    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const page = await browser.get("/console/payouts?claim=CLM-1&from=2026-02-30&to=yesterday");
    assert.equal(page.status, 400);
    assert.match(textOf(page.html), /Created to: a date as YYYY-MM-DD/);
    assert.match(page.html, /name="claim" value="CLM-1"/);
    assert.match(page.html, /name="to" value="yesterday"[^>]*aria-invalid="true"/);
  }, NO_LIMIT);
});

Deno.test("console payouts: an empty search says what to do; paging follows on the server", async () => {
  await withHttpFixture(async (f) => {
    await seed(f);
    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const none = await browser.get("/console/payouts?claim=NOPE");
    assert.equal(none.status, 200);
    assert.match(textOf(none.html), /No payout matches this search\. Check the claim id/);
    const live = await browser.get("/console/payouts?env=live");
    assert.match(textOf(live.html), /No payouts in the live environment yet/);
  }, NO_LIMIT);
});

Deno.test("console payouts: an operator limited to Beacon never sees Acme's payouts, even by id", async () => {
  await withHttpFixture(async (f) => {
    const { rita, acme } = await seed(f);
    const { browser } = await consoleAs(f, {
      email: "bo@ops.test",
      role: "admin",
      companies: f.cast.beacon.id,
    });
    const list = await browser.get("/console/payouts");
    assert.deepEqual(listedPayees(list.html), ["Bea Beacon"]);
    assert.doesNotMatch(list.html, /Acme Mutual/);
    const byClaim = await browser.get("/console/payouts?claim=CLM-1001");
    assert.deepEqual(listedPayees(byClaim.html), []);
    const detail = await browser.get(`/console/payouts/${rita.payoutId}`);
    assert.equal(detail.status, 404);
    const missing = await browser.get("/console/payouts/pay_doesnotexist");
    assert.equal(missing.status, 404);
    assert.equal(
      textOf(detail.html).replace(rita.payoutId, "X"),
      textOf(missing.html).replace("pay_doesnotexist", "X"),
    );
    const balances = await lineBalances(f, acme.lineId);
    const cancel = await browser.post(`/console/payouts/${rita.payoutId}/cancel`, {});
    assert.equal(cancel.status, 404);
    assert.deepEqual(await lineBalances(f, acme.lineId), balances);
    assert.equal(
      await countRows(f, "test", "SELECT count(*) AS n FROM audit_log WHERE action <> 'login'"),
      0,
    );
  }, NO_LIMIT);
});

Deno.test("console payout detail: timeline, ledger entries, events, notifications, method by last four", async () => {
  await withHttpFixture(async (f) => {
    const { rita } = await seed(f);
    const database = f.deps.databases.test;
    await database.writer.write(async (tx) => {
      const offered = await applyMove(tx, rita.payoutId, { kind: "offer" }, f.clock.now());
      assert.equal(offered.ok, true);
      const selected = await selectMethod(tx, rita.payoutId, {
        paymentMethodId: 1,
        details: { accountNumber: "000123456789" },
      }, f.clock.now());
      assert.equal(selected.ok, true);
    });
    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const page = await browser.get(`/console/payouts/${rita.payoutId}`);
    assert.equal(page.status, 200);
    const text = textOf(page.html);
    assert.match(text, /Payout to Rita Rivers/);
    assert.match(text, /Amount \$1,250\.00/);
    assert.match(text, /ACH ending in 6789/);
    assert.doesNotMatch(page.html, /000123456789/);
    assert.match(text, /Claim CLM-1001/);
    assert.match(text, /Timeline .*Created.*Waiting for the payee's choice.*Method selected/);
    assert.match(text, /payout\.hold available -\$1,250\.00 reserved \$1,250\.00/);
    assert.match(text, /disbursement\.created/);
    // A viewer sees no action.
    assert.match(text, /Your role \(viewer\) reads payouts/);
    assert.doesNotMatch(page.html, /\/cancel"/);
  }, NO_LIMIT);
});

Deno.test("console payout detail: a clerk cancels, the hold goes back to available, one audit row", async () => {
  await withHttpFixture(async (f) => {
    const { rita, acme } = await seed(f);
    const { operator, browser } = await consoleAs(f, { email: "cleo@ops.test", role: "clerk" });
    assert.deepEqual(
      [
        (await lineBalances(f, acme.lineId)).available,
        (await lineBalances(f, acme.lineId)).reserved,
      ],
      [1_000_000 - 125_000 - 8_025, 133_025],
    );
    const page = await browser.get(`/console/payouts/${rita.payoutId}`);
    assert.match(page.html, new RegExp(`action="/console/payouts/${rita.payoutId}/cancel"`));
    assert.doesNotMatch(page.html, /\/reoffer"/);
    const canceled = await browser.post(`/console/payouts/${rita.payoutId}/cancel`, {});
    assert.equal(canceled.status, 303);
    assert.equal(canceled.location, `/console/payouts/${rita.payoutId}?done=canceled&env=test`);
    const after = await browser.get(canceled.location!);
    assert.match(textOf(after.html), /The payout was canceled and its held money went back/);
    assert.match(textOf(after.html), /Status Canceled/);
    // The page says who canceled it, and when.
    assert.match(
      textOf(after.html),
      /Who acted Jan 5, 2026, 15:02 UTC — canceled by cleo@ops\.test console 127\.0\.0\.1/,
    );
    const balances = await lineBalances(f, acme.lineId);
    assert.deepEqual([balances.available, balances.reserved], [1_000_000 - 8_025, 8_025]);
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT action, object_id, operator_email, origin, before, after FROM audit_log WHERE action <> 'login'",
    );
    assert.equal(rows.length, 1);
    assert.deepEqual(
      {
        ...rows[0],
        before: JSON.parse(String(rows[0].before)),
        after: JSON.parse(String(rows[0].after)),
      },
      {
        action: "payout:cancel",
        object_id: rita.payoutId,
        operator_email: operator.email,
        origin: "console 127.0.0.1",
        before: {
          id: rita.payoutId,
          status: "created",
          amount_cents: 125_000,
          held_cents: 125_000,
        },
        after: { id: rita.payoutId, status: "canceled", amount_cents: 125_000, held_cents: 0 },
      },
    );
    // Again: the state machine refuses, 409, and nothing more is written.
    const again = await browser.post(`/console/payouts/${rita.payoutId}/cancel`, {});
    assert.equal(again.status, 409);
    assert.match(textOf(again.html), /can be canceled only before a method is selected/);
    assert.equal(
      await countRows(f, "test", "SELECT count(*) AS n FROM audit_log WHERE action <> 'login'"),
      1,
    );
  }, NO_LIMIT);
});

Deno.test("console payout detail: a viewer's cancel and a clerk's re-offer are refused 403, nothing written", async () => {
  await withHttpFixture(async (f) => {
    const { rita, acme } = await seed(f);
    await f.deps.databases.test.writer.write(async (tx) => {
      const now = f.clock.now();
      for (
        const step of [
          { kind: "offer" } as const,
          {
            kind: "select",
            paymentMethodId: 1,
            fees: { payorFeeCents: 0, payeeFeeCents: 0, serviceFeeCents: 0 },
          } as const,
          { kind: "send" } as const,
          { kind: "fail", reason: "R03" } as const,
        ]
      ) {
        const moved = await applyMove(tx, rita.payoutId, step, now);
        assert.equal(moved.ok, true, step.kind);
      }
    });
    const viewer = (await consoleAs(f, { email: "vic@ops.test", role: "viewer" })).browser;
    const clerk = (await consoleAs(f, { email: "cleo@ops.test", role: "clerk" })).browser;
    const before = await lineBalances(f, acme.lineId);
    const jobs = "SELECT count(*) AS n FROM scheduled_jobs WHERE kind = 'payout.reoffer'";
    await viewer.get(`/console/payouts/${rita.payoutId}`);
    const cancel = await viewer.post(`/console/payouts/${rita.payoutId}/cancel`, {});
    assert.equal(cancel.status, 403);
    assert.match(textOf(cancel.html), /vic@ops\.test is a viewer: this needs the clerk role/);
    const page = await clerk.get(`/console/payouts/${rita.payoutId}`);
    assert.match(page.html, /\/cancel"/);
    assert.doesNotMatch(page.html, /\/reoffer"/);
    const reoffer = await clerk.post(`/console/payouts/${rita.payoutId}/reoffer`, {});
    assert.equal(reoffer.status, 403);
    assert.match(textOf(reoffer.html), /cleo@ops\.test is a clerk: this needs the admin role/);
    assert.deepEqual(await lineBalances(f, acme.lineId), before);
    assert.equal(await countRows(f, "test", jobs), 0);
    assert.equal(
      await countRows(f, "test", "SELECT count(*) AS n FROM audit_log WHERE action <> 'login'"),
      0,
    );
    assert.equal(
      await countRows(f, "test", "SELECT count(*) AS n FROM payouts WHERE status = 'failed'"),
      1,
    );

    const { browser: admin } = await consoleAs(f, { email: "ada@ops.test", role: "admin" });
    const adminPage = await admin.get(`/console/payouts/${rita.payoutId}`);
    assert.match(adminPage.html, /\/reoffer"/);
    const done = await admin.post(`/console/payouts/${rita.payoutId}/reoffer`, {});
    assert.equal(done.status, 303);
    assert.equal(await countRows(f, "test", jobs), 1);
    assert.equal(
      await countRows(
        f,
        "test",
        "SELECT count(*) AS n FROM audit_log WHERE action = 'payout:reoffer'",
      ),
      1,
    );
  }, NO_LIMIT);
});

Deno.test("console payout detail: a clerk resends the payee's notification (audited)", async () => {
  await withHttpFixture(async (f) => {
    const { sam } = await seed(f);
    const { browser } = await consoleAs(f, { email: "cleo@ops.test", role: "clerk" });
    const notifications = "SELECT count(*) AS n FROM notifications WHERE payout_id = ?";
    assert.equal(await countRows(f, "test", notifications, [sam.payoutId]), 0);
    await browser.get(`/console/payouts/${sam.payoutId}`);
    const resent = await browser.post(`/console/payouts/${sam.payoutId}/resend`, {});
    assert.equal(resent.status, 303);
    assert.equal(await countRows(f, "test", notifications, [sam.payoutId]), 1);
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT action, after FROM audit_log WHERE action <> 'login'",
    );
    assert.deepEqual(rows.map((r) => [r.action, JSON.parse(String(r.after)).channels]), [
      ["payout:resend_notification", ["email"]],
    ]);
    const page = await browser.get(`/console/payouts/${sam.payoutId}`);
    const text = textOf(page.html);
    assert.match(
      text,
      /Sent email sam\.stone@example\.test Acme Mutual has a payment for you sent/,
    );
    assert.match(text, /Payee: sent/);
  }, NO_LIMIT);
});

Deno.test("console payouts: no secret appears on any page (keys, portal links and codes, account numbers)", async () => {
  await withHttpFixture(async (f) => {
    const { rita, sam } = await seed(f);
    await f.deps.databases.test.writer.write(async (tx) => {
      await applyMove(tx, rita.payoutId, { kind: "offer" }, f.clock.now());
      await selectMethod(tx, rita.payoutId, {
        paymentMethodId: 1,
        details: { accountNumber: "000987654321" },
      }, f.clock.now());
    });
    const { browser } = await consoleAs(f, { email: "ada@ops.test", role: "admin" });
    await browser.get(`/console/payouts/${sam.payoutId}`);
    await browser.post(`/console/payouts/${sam.payoutId}/resend`, {});
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT body, links, code FROM notifications",
    );
    const links = rows.flatMap((r) => JSON.parse(String(r.links)) as string[]);
    assert.ok(links.length > 0);
    const secrets = [
      f.cast.acmeAutoKeyTest,
      f.cast.beaconKeyTest,
      f.cast.acme.companyKey,
      f.cast.alice.keyTest,
      "000987654321",
      ...links,
      ...links.map((link) => new URL(link).pathname.split("/").pop()!),
      ...rows.map((r) => r.code).filter((code) => code !== null).map(String),
    ];
    const pages = [
      "/console/payouts",
      `/console/payouts/${rita.payoutId}`,
      `/console/payouts/${sam.payoutId}`,
      "/console/payouts?payee=sam",
    ];
    for (const path of pages) {
      const page = await browser.get(path);
      assert.equal(page.status, 200, path);
      for (const secret of secrets) {
        assert.ok(!page.html.includes(secret), `${path} shows a secret`);
      }
    }
    const audit = await f.deps.databases.test.readClient.execute(
      "SELECT before, after FROM audit_log",
    );
    for (const row of audit.rows) {
      for (const secret of secrets) assert.ok(!JSON.stringify(row).includes(secret));
    }
  }, NO_LIMIT);
});
