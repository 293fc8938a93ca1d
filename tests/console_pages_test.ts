/**
 * The console's Funding, Approvals and Audit pages (issue 20): an admin records a received wire
 * (at once in test, as a pending approval in live), a second admin approves it (never the
 * requester), the audit log shows both with filters and its chain verifies; clerks are refused
 * 403 with nothing written, and operators see only their companies.
 */
import assert from "node:assert/strict";
import { addFunds } from "../lib/funding/store.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { consoleAs, countRows, textOf } from "./console_helpers.ts";

/** A pending live wire for Acme's line; returns its id. */
async function pendingLiveWire(f: HttpFixture, cents: number): Promise<string> {
  const funded = await f.deps.databases.live.writer.write((tx) =>
    addFunds(
      tx,
      {
        companyId: f.cast.acme.id,
        lineId: f.cast.acme.autoLineId,
        paymentMethod: "WireTransfer",
        amountCents: cents,
        description: "claims reserve top-up",
        largeDisbursement: false,
        requestFingerprint: crypto.randomUUID(),
      },
      "live",
      f.clock.now(),
    )
  );
  if (!funded.ok) throw new Error(funded.message);
  assert.equal(funded.value.funding.status, "Pending");
  return funded.value.funding.id;
}

const available = async (f: HttpFixture, environment: "test" | "live") => {
  const { rows } = await f.deps.databases[environment].readClient.execute({
    sql: "SELECT balance_cents FROM ledger_accounts WHERE line_id = ? AND code = 'available'",
    args: [f.cast.acme.autoLineId],
  });
  return rows[0] ? Number(rows[0].balance_cents) : 0;
};

Deno.test("console funding: an admin records a returned ACH funding in test at once, audited; a clerk sees no button and is refused 403", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 250_000, "ACH");
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT id FROM fundings WHERE payment_method = 'ACH'",
    );
    const fundingId = String(rows[0].id);
    const { browser: clerk } = await consoleAs(f, { email: "cleo@ops.test", role: "clerk" });
    const seen = await clerk.get("/console/funding?env=test");
    assert.equal(seen.status, 200);
    assert.match(textOf(seen.html), /Acme Mutual auto ACH \$2,500\.00 Pending/);
    assert.ok(!seen.html.includes("Record returned funding"));
    const refused = await clerk.post(`/console/funding/${fundingId}/return`, { env: "test" });
    assert.equal(refused.status, 403);
    assert.equal(
      await countRows(f, "test", "SELECT count(*) AS n FROM fundings WHERE status = 'Returned'"),
      0,
    );

    const { browser: admin } = await consoleAs(f, { email: "ada@ops.test", role: "admin" });
    const page = await admin.get("/console/funding?env=test&status=Pending");
    assert.match(
      page.html,
      /<button type="submit" class="danger" aria-label="Record ACH funding [^"]+ returned">Record returned funding<\/button>/,
    );
    const returned = await admin.post(`/console/funding/${fundingId}/return`, { env: "test" });
    assert.equal(returned.status, 303);
    assert.equal(returned.location, "/console/funding?done=funding%3Areturn&env=test");
    assert.equal(
      await countRows(
        f,
        "test",
        "SELECT count(*) AS n FROM fundings WHERE status = 'Returned' AND id = ?",
        [fundingId],
      ),
      1,
    );
    const audit = await f.deps.databases.test.readClient.execute(
      "SELECT operator_email, object_id, before, after FROM audit_log WHERE action = 'funding:return'",
    );
    assert.equal(audit.rows.length, 1);
    assert.equal(audit.rows[0].operator_email, "ada@ops.test");
    assert.match(String(audit.rows[0].before), /"status":"Pending"/);
    assert.match(String(audit.rows[0].after), /"status":"Returned"/);
    const again = await admin.post(`/console/funding/${fundingId}/return`, { env: "test" });
    assert.equal(again.status, 409);
    assert.match(textOf(again.html), /is Returned, not Pending/);
  });
});

Deno.test("console funding and approvals: a live wire waits for a second admin, who approves it; the requester cannot; audit shows both", async () => {
  await withHttpFixture(async (f) => {
    const wireId = await pendingLiveWire(f, 5_000_000);
    const { operator: ada, browser: requester } = await consoleAs(f, {
      email: "ada@ops.test",
      role: "admin",
    });
    await requester.get("/console/funding?env=live");
    const requested = await requester.post(`/console/funding/${wireId}/receive-wire`, {
      env: "live",
    });
    assert.equal(requested.status, 303);
    assert.equal(requested.location, "/console/funding?done=approval_requested&env=live");
    assert.equal(await available(f, "live"), 0, "nothing moves before the approval");
    const { rows } = await f.deps.databases.live.readClient.execute(
      "SELECT id, requested_by FROM approvals WHERE status = 'pending_approval'",
    );
    assert.equal(rows.length, 1);
    const approvalId = String(rows[0].id);
    assert.equal(rows[0].requested_by, ada.id);

    const list = await requester.get("/console/approvals?env=live");
    assert.match(
      textOf(list.html),
      /wire\.receive wire:receive [^ ]+: WireTransfer of \$50,000\.00 Acme Mutual ada@ops\.test pending/,
    );
    const own = await requester.get(`/console/approvals/${approvalId}?env=live`);
    assert.match(textOf(own.html), /You requested this: another admin must decide it/);
    assert.ok(!own.html.includes(">Approve</button>"), "no Approve button on your own request");
    const ownApprove = await requester.post(`/console/approvals/${approvalId}/approve`, {
      env: "live",
    });
    assert.equal(ownApprove.status, 409);
    assert.match(textOf(ownApprove.html), /was requested by you: another admin must decide it/);

    const { browser: clerk } = await consoleAs(f, { email: "cleo@ops.test", role: "clerk" });
    const clerkPage = await clerk.get(`/console/approvals/${approvalId}?env=live`);
    assert.ok(!clerkPage.html.includes(">Approve</button>"));
    assert.equal(
      (await clerk.post(`/console/approvals/${approvalId}/approve`, { env: "live" })).status,
      403,
    );
    assert.equal(await available(f, "live"), 0);

    const { browser: second } = await consoleAs(f, { email: "bo@ops.test", role: "admin" });
    const detail = await second.get(`/console/approvals/${approvalId}?env=live`);
    assert.match(detail.html, />Approve<\/button>/);
    const noReason = await second.post(`/console/approvals/${approvalId}/reject`, {
      env: "live",
      reason: "  ",
    });
    assert.equal(noReason.status, 400);
    assert.match(noReason.html, /Reason is required/);
    const approved = await second.post(`/console/approvals/${approvalId}/approve`, { env: "live" });
    assert.equal(approved.status, 303);
    assert.equal(approved.location, "/console/approvals?done=approved&env=live");
    assert.equal(await available(f, "live"), 5_000_000);
    const funding = await second.get("/console/funding?env=live");
    assert.match(textOf(funding.html), /\$50,000\.00 Completed/);

    const audit = await second.get("/console/audit?env=live&action=approval%3Aapprove");
    assert.equal(audit.status, 200);
    assert.match(textOf(audit.html), /bo@ops\.test console 127\.0\.0\.1 approval:approve approval/);
    assert.ok(!textOf(audit.html).includes("approval:request"), "the filter keeps one action");
    // Sign-ins are logged in both environments: the test log shows them too.
    for (const env of ["live", "test"]) {
      const signIns = await second.get(`/console/audit?env=${env}&action=login`);
      assert.match(
        textOf(signIns.html),
        /bo@ops\.test console 127\.0\.0\.1 login operator_session/,
      );
      assert.match(
        textOf(signIns.html),
        /ada@ops\.test console 127\.0\.0\.1 login operator_session/,
      );
    }
    const verified = await second.get("/console/audit?env=live&verify=1");
    assert.match(textOf(verified.html), /Chain verified: \d+ rows, chain intact/);
    const badFilter = await second.get("/console/audit?env=live&since=yesterday");
    assert.equal(badFilter.status, 400);
    assert.match(badFilter.html, /From: a date, YYYY-MM-DD/);
    assert.match(badFilter.html, /name="since" value="yesterday"/);
    const noSuchDay = await second.get("/console/audit?env=live&since=2026-02-30");
    assert.equal(noSuchDay.status, 400);
    assert.match(noSuchDay.html, /From: not a real date/);
  });
});

Deno.test("console approvals and audit: an operator of one company sees neither another company's approvals nor its audit rows, and no chain check", async () => {
  await withHttpFixture(async (f) => {
    const wireId = await pendingLiveWire(f, 100_000);
    const { browser: ada } = await consoleAs(f, { email: "ada@ops.test", role: "admin" });
    await ada.get("/console/funding?env=live");
    await ada.post(`/console/funding/${wireId}/receive-wire`, { env: "live" });
    const { rows } = await f.deps.databases.live.readClient.execute("SELECT id FROM approvals");
    const approvalId = String(rows[0].id);

    const { browser: beaconOnly } = await consoleAs(f, {
      email: "bea@ops.test",
      role: "admin",
      companies: f.cast.beacon.tin,
    });
    const list = await beaconOnly.get("/console/approvals?env=live");
    assert.ok(!list.html.includes(approvalId));
    assert.match(textOf(list.html), /Nothing waits for a second admin/);
    assert.equal((await beaconOnly.get(`/console/approvals/${approvalId}?env=live`)).status, 404);
    assert.equal(
      (await beaconOnly.post(`/console/approvals/${approvalId}/approve`, { env: "live" })).status,
      404,
    );
    assert.equal(
      (await beaconOnly.post(`/console/funding/${wireId}/receive-wire`, { env: "live" })).status,
      404,
    );
    const audit = await beaconOnly.get("/console/audit?env=live");
    assert.ok(!audit.html.includes(wireId), "Acme's audit rows are not shown");
    assert.match(textOf(audit.html), /No audit rows match/);
    assert.ok(!audit.html.includes("verify=1"));
    assert.equal(
      await countRows(
        f,
        "live",
        "SELECT count(*) AS n FROM approvals WHERE status = 'pending_approval'",
      ),
      1,
    );
  });
});
