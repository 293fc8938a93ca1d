import assert from "node:assert/strict";
import { PDFDocument } from "pdf-lib";
import { findLinkByToken } from "../lib/portal/store.ts";
import { readLineBalances } from "../lib/ledger/store.ts";
import { api, asBeacon, parties, payee } from "./api_helpers.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { inbox } from "./portal_helpers.ts";

const HOUR_MS = 3_600_000;

async function createClaim(f: HttpFixture, uuid: string, payees: unknown[]) {
  const res = await api(f, "POST", "/api/disbursements", {
    disbursement_uuid: uuid,
    large_disbursement: false,
    payees,
  });
  assert.equal(res.status, 201, await res.clone().text());
}

async function advanceSandbox(f: HttpFixture, seconds: number) {
  const res = await api(f, "POST", "/api/sandbox/clock/advance", { seconds });
  assert.equal(res.status, 200);
}

/** The portal tokens sent to the payee, oldest first, read from the sandbox outbox. */
async function sentLinks(f: HttpFixture, recipient: string): Promise<string[]> {
  const { rows } = await f.deps.databases.test.readClient.execute({
    sql: "SELECT links FROM notifications WHERE recipient = ? ORDER BY rowid",
    args: [recipient],
  });
  return rows.map((row) => (JSON.parse(String(row.links)) as string[])[0]);
}

const tokenOf = (link: string) => link.slice(link.lastIndexOf("/") + 1);

Deno.test("resend notification: 202, a fresh link replaces the old, 5 per hour then 429 with Retry-After", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await createClaim(f, "CLM-R", [
      payee("p-a", 10, { phone: "+15555550100", delivery_options: { email: true, sms: true } }),
    ]);
    await advanceSandbox(f, 1);
    const offered = await sentLinks(f, "p-a@example.test");
    assert.equal(offered.length, 1, "the offer sent one e-mail");
    assert.match(offered[0], /^http:\/\/127\.0\.0\.1:8000\/portal\/[0-9A-Za-z]{43}$/);
    assert.deepEqual(await sentLinks(f, "+15555550100"), offered, "and one SMS with the same link");

    const path = "/api/disbursements/CLM-R/payees/p-a/resend-notification";
    const first = await api(f, "POST", path);
    assert.equal(first.status, 202);
    assert.deepEqual(await first.json(), {
      disbursement_uuid: "CLM-R",
      payee_uuid: "p-a",
      channels: ["email", "sms"],
      sent_at: "2026-01-05 15:00:01",
    });
    const links = await sentLinks(f, "p-a@example.test");
    assert.equal(links.length, 2);
    const read = f.deps.databases.test.readClient;
    const now = Date.UTC(2026, 0, 5, 15, 0, 1);
    const [old, fresh] = await Promise.all(
      links.map((link) => findLinkByToken(read, tokenOf(link))),
    );
    assert.ok(old && old.replacedAt === now, "the old link is dead");
    assert.ok(fresh && fresh.replacedAt === null && fresh.expiresAt > now, "the new link works");

    for (let i = 2; i <= 5; i++) {
      assert.equal((await api(f, "POST", path)).status, 202, `resend ${i}`);
    }
    f.clock.advance(10 * 60_000);
    const limited = await api(f, "POST", path);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("Retry-After"), String(50 * 60));
    assert.deepEqual(await limited.json(), {
      name: "RATE_LIMIT_REACHED",
      message: "at most 5 notifications per payee per hour; retry in 3000 s",
      details: [],
    });
    assert.equal(
      (await sentLinks(f, "p-a@example.test")).length,
      6,
      "the refused resend sent nothing",
    );
    f.clock.advance(50 * 60_000);
    assert.equal((await api(f, "POST", path)).status, 202, "an hour after the first, one more");
  });
});

Deno.test("resend right after create: 202 with the first offer sent now, once; the offer job then sends nothing", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-N",
      large_disbursement: false,
      payees: [
        payee("p-a", 10, { phone: "+15555550100", delivery_options: { email: true, sms: true } }),
        payee("p-b", 10, { permission_required_from: ["lienholder"] }),
      ],
      authorization_parties: [parties[0]],
    });
    assert.equal(created.status, 201);
    const path = (who: string) => `/api/disbursements/CLM-N/payees/${who}/resend-notification`;
    const resent = await api(f, "POST", path("p-a"));
    assert.equal(resent.status, 202, await resent.clone().text());
    assert.deepEqual(await resent.json(), {
      disbursement_uuid: "CLM-N",
      payee_uuid: "p-a",
      channels: ["email", "sms"],
      sent_at: "2026-01-05 15:00:00",
    });
    // The payee with a party to ask gets its first notice (approval needed) the same way.
    assert.equal((await api(f, "POST", path("p-b"))).status, 202);
    const subjects = async () =>
      (await inbox(f)).map((m) => `${m.channel} ${m.to}: ${m.subject ?? m.body.slice(0, 40)}`)
        .sort();
    const firstNotices = [
      "email p-a@example.test: Acme Mutual has a payment for you",
      "email p-b@example.test: Acme Mutual has a payment for you that needs approval",
      "sms +15555550100: Acme Mutual is paying you $10.00. Choose",
    ];
    assert.deepEqual(await subjects(), firstNotices);
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT payee_uuid, status FROM payouts ORDER BY payee_uuid",
    );
    assert.deepEqual(rows.map((r) => [r.payee_uuid, r.status]), [
      ["p-a", "modality_offered"],
      ["p-b", "awaiting_endorsement"],
    ]);

    // The jobs the create scheduled run now and find each payee told: nothing more is sent.
    await advanceSandbox(f, 1);
    assert.deepEqual(await subjects(), firstNotices, "exactly one first notice per channel");
    const offers = await f.deps.databases.test.readClient.execute(
      `SELECT count(*) AS n FROM payout_transitions WHERE to_status = 'modality_offered'`,
    );
    assert.equal(Number(offers.rows[0].n), 1, "offered once");

    // Later resends are reminders; the first counted against the hourly allowance.
    assert.equal((await api(f, "POST", path("p-a"))).status, 202);
    assert.deepEqual(
      (await inbox(f)).filter((m) => m.channel === "email" && m.to === "p-a@example.test")
        .map((m) => m.subject),
      ["Reminder: Acme Mutual has a payment for you", "Acme Mutual has a payment for you"],
    );
    for (let i = 3; i <= 5; i++) assert.equal((await api(f, "POST", path("p-a"))).status, 202);
    assert.equal((await api(f, "POST", path("p-a"))).status, 429);
  }, { SANDBOX_INBOX: "1" });
});

Deno.test("resend before a payee can be told: a disbursement waiting for funds is 409, nothing sent", async () => {
  await withHttpFixture(async (f) => {
    const res = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-W",
      large_disbursement: true,
      payees: [payee("p-a", 10)],
    });
    assert.equal(res.status, 201);
    const waiting = await api(f, "POST", "/api/disbursements/CLM-W/payees/p-a/resend-notification");
    assert.equal(waiting.status, 409);
    assert.deepEqual(await waiting.json(), {
      name: "CONFLICT",
      message: "payee p-a is PendingFunds: there is no notification to resend",
      details: [],
    });
    assert.deepEqual(await sentLinks(f, "p-a@example.test"), []);
  });
});

Deno.test("RESEND_PER_HOUR_MAX is the allowance: with 2, the third resend in the hour is 429 and sends nothing", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await createClaim(f, "CLM-L", [payee("p-a", 10)]);
    await advanceSandbox(f, 1);
    const path = "/api/disbursements/CLM-L/payees/p-a/resend-notification";
    assert.equal((await api(f, "POST", path)).status, 202);
    assert.equal((await api(f, "POST", path)).status, 202);
    const limited = await api(f, "POST", path);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("Retry-After"), "3600");
    assert.deepEqual(await limited.json(), {
      name: "RATE_LIMIT_REACHED",
      message: "at most 2 notifications per payee per hour; retry in 3600 s",
      details: [],
    });
    assert.equal((await sentLinks(f, "p-a@example.test")).length, 3, "the offer and two resends");
  }, { RESEND_PER_HOUR_MAX: "2" });
});

Deno.test("messages name the amount as the portal does: $1,250.00 in the e-mail and the SMS", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 1_000_000);
    await createClaim(f, "CLM-M", [
      payee("p-a", 1250, { phone: "+15555550100", delivery_options: { email: true, sms: true } }),
    ]);
    await advanceSandbox(f, 1);
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT channel, body FROM notifications ORDER BY channel",
    );
    assert.deepEqual(rows.map((row) => row.channel), ["email", "sms"]);
    assert.match(String(rows[0].body), /\nAcme Mutual is paying you \$1,250\.00\. Choose how/);
    assert.match(String(rows[1].body), /^Acme Mutual is paying you \$1,250\.00\. Choose how/);
  });
});

Deno.test("resend with an Idempotency-Key sends once; a 429 under a key is not stored", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await createClaim(f, "CLM-K", [payee("p-a", 10)]);
    await advanceSandbox(f, 1);
    const path = "/api/disbursements/CLM-K/payees/p-a/resend-notification";
    const headers = { "Idempotency-Key": "resend-1" };
    const first = await api(f, "POST", path, undefined, undefined, headers);
    const again = await api(f, "POST", path, undefined, undefined, headers);
    assert.deepEqual([first.status, again.status], [202, 202]);
    assert.equal(again.headers.get("Idempotent-Replayed"), "true");
    assert.equal((await sentLinks(f, "p-a@example.test")).length, 2, "offer + one resend");
    for (let i = 0; i < 4; i++) await api(f, "POST", path);
    const keyed = { "Idempotency-Key": "resend-2" };
    assert.equal((await api(f, "POST", path, undefined, undefined, keyed)).status, 429);
    f.clock.advance(HOUR_MS);
    const later = await api(f, "POST", path, undefined, undefined, keyed);
    assert.equal(later.status, 202, "the same key works once the hour passed");
  });
});

Deno.test("resend refusals: canceled payee 409, unknown payee 404, another company 404", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await createClaim(f, "CLM-C", [payee("p-a", 10), payee("p-b", 10)]);
    await advanceSandbox(f, 1);
    assert.equal((await api(f, "POST", "/api/disbursements/CLM-C/payees/p-a/cancel")).status, 200);
    const canceled = await api(
      f,
      "POST",
      "/api/disbursements/CLM-C/payees/p-a/resend-notification",
    );
    assert.equal(canceled.status, 409);
    assert.deepEqual(await canceled.json(), {
      name: "CONFLICT",
      message: "payee p-a is Canceled: there is no notification to resend",
      details: [],
    });
    const unknown = await api(
      f,
      "POST",
      "/api/disbursements/CLM-C/payees/nobody/resend-notification",
    );
    assert.equal(unknown.status, 404);
    assert.equal((await unknown.json() as { name: string }).name, "RESOURCE_NOT_FOUND");
    for (
      const [method, path] of [
        ["POST", "/api/disbursements/CLM-C/payees/p-b/resend-notification"],
        ["GET", "/api/disbursements/CLM-C/payees/p-b/transaction"],
        ["GET", "/api/disbursements/CLM-C/payees/p-b/signed-documents"],
      ]
    ) {
      const res = await api(f, method, path, undefined, asBeacon(f));
      assert.equal(res.status, 404, `${method} ${path} as another company`);
    }
    assert.equal((await sentLinks(f, "p-b@example.test")).length, 1, "nothing resent by Beacon");
  });
});

Deno.test("payee transaction: money, fees, method, rail reference and history through completion", async () => {
  await withHttpFixture(async (f) => {
    await f.deps.databases.test.writer.write(async (tx) => {
      for (const [method, payor, payee, service] of [[1, 150, 50, 25], [2, 300, 0, 0]]) {
        await tx.execute({
          sql: "INSERT INTO fee_schedules VALUES (?, ?, ?, ?, ?)",
          args: [f.cast.acme.id, method, payor, payee, service],
        });
      }
    });
    await fundAcmeAuto(f, 100_000);
    await createClaim(f, "CLM-T", [payee("success+ach", 100)]);
    const path = "/api/disbursements/CLM-T/payees/success+ach/transaction";
    const before = await (await api(f, "GET", path)).json() as Record<string, unknown>;
    assert.deepEqual(
      [before.status, before.held_amount, before.payment_method, before.sent_at],
      ["Created", 103, null, null],
      "before selection the hold covers the highest fees (check: 3.00)",
    );
    await advanceSandbox(f, 30 * 60); // the 10:30 New York cutoff: its ACH file goes
    const res = await api(f, "GET", path);
    assert.equal(res.status, 200);
    const sent = await res.json() as Record<string, unknown>;
    const reference = sent.rail_reference as string;
    assert.match(reference, /^po_\w+-1$/);
    assert.deepEqual(sent, {
      disbursement_uuid: "CLM-T",
      payee_uuid: "success+ach",
      status: "Processing",
      status_id: 5,
      amount: 100,
      fees: { payor_fee: 1.5, service_fee: 0.25, payee_fee: 0.5 },
      billed_amount: 101.75,
      net_amount: 99.5,
      held_amount: 101.75,
      payment_method_id: 1,
      payment_method: "ACHPayment",
      account_last_four: null,
      rail_reference: reference,
      failure_reason: null,
      retry_count: 0,
      created_at: "2026-01-05 15:00:00",
      updated_at: "2026-01-05 15:30:00",
      selected_at: "2026-01-05 15:00:00",
      sent_at: "2026-01-05 15:30:00",
      completed_at: null,
      field_values: [],
      history: [
        { status: "Created", status_id: 1, at: "2026-01-05 15:00:00", detail: null },
        {
          status: "PendingPaymentMethodSelection",
          status_id: 3,
          at: "2026-01-05 15:00:00",
          detail: null,
        },
        { status: "PaymentMethodSelected", status_id: 4, at: "2026-01-05 15:00:00", detail: "ach" },
        { status: "Processing", status_id: 5, at: "2026-01-05 15:30:00", detail: reference },
      ],
    });
    const balances = await readLineBalances(
      f.deps.databases.test.readClient,
      f.cast.acme.autoLineId,
    );
    assert.equal(
      balances.available,
      100_000 - 10_175,
      "the ledger holds what the transaction bills",
    );
    await advanceSandbox(f, 5 * 86_400);
    const done = await (await api(f, "GET", path)).json() as Record<string, unknown>;
    assert.equal(done.status, "Completed");
    assert.equal(
      done.completed_at,
      "2026-01-07 22:00:00",
      "ACH completes at 17:00 New York two banking days after its effective date",
    );
    assert.equal((done.history as unknown[]).length, 5);
  });
});

Deno.test("signed documents: the payee's signatures with expiring signed links that serve the PDF", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    await createClaim(f, "CLM-S", [payee("p-a", 10), payee("p-b", 10)]);
    const original = await PDFDocument.create();
    original.addPage([612, 792]);
    const pdf = await original.save();
    const uploaded = await api(f, "POST", "/api/documents", {
      doc_type_id: 1,
      name: "Release of claim",
      is_sign_required: true,
      pdf_base64: pdf.toBase64(),
    });
    const { document_uuid } = await uploaded.json() as { document_uuid: string };
    await f.deps.databases.test.writer.write(async (tx) => {
      const { rows } = await tx.execute("SELECT id FROM payouts WHERE payee_uuid = 'p-a'");
      await tx.execute({
        sql:
          `INSERT INTO signed_documents (id, document_id, payout_id, signed_by, signed_at, signer_ip, signer_user_agent,
                original_sha256, content) VALUES ('sig_1', ?, ?, 'Pat Doe', ?, '192.0.2.1', 'test', 'x', ?)`,
        args: [document_uuid, String(rows[0].id), Date.UTC(2026, 0, 5, 16, 30, 0), pdf],
      });
    });
    const list = await api(f, "GET", "/api/disbursements/CLM-S/payees/p-a/signed-documents");
    assert.equal(list.status, 200);
    const [signed, ...rest] = await list.json() as Record<string, string>[];
    assert.equal(rest.length, 0);
    const link = new URL(signed.DocumentLink);
    assert.deepEqual({ ...signed, DocumentLink: link.origin + link.pathname }, {
      DocumentName: "Release of claim",
      SignedBy: "Pat Doe",
      SignedOn: "2026-01-05 16:30:00",
      DocumentLink: "http://127.0.0.1:8000/documents/test/signed/sig_1",
    });
    const download = await f.app.request(link.pathname + link.search);
    assert.equal(download.status, 200);
    assert.equal(download.headers.get("Content-Type"), "application/pdf");
    assert.equal(download.headers.get("X-Content-Type-Options"), "nosniff");
    assert.match(
      download.headers.get("Content-Disposition")!,
      /^attachment; filename="Release of claim\.pdf"$/,
    );
    assert.deepEqual(new Uint8Array(await download.arrayBuffer()), pdf);

    const tampered = new URL(link);
    tampered.searchParams.set("expires", String(Number(link.searchParams.get("expires")) + 3600));
    assert.equal((await f.app.request(tampered.pathname + tampered.search)).status, 404);
    const otherEnvironment = link.pathname.replace("/test/", "/live/") + link.search;
    assert.equal((await f.app.request(otherEnvironment)).status, 404);
    f.clock.advance(15 * 60_000);
    const expired = await f.app.request(link.pathname + link.search);
    assert.equal(expired.status, 404, "the link dies after 15 minutes");

    const none = await api(f, "GET", "/api/disbursements/CLM-S/payees/p-b/signed-documents");
    assert.deepEqual([none.status, await none.json()], [200, []]);
  });
});

Deno.test("payee transaction carries the payee's metadata: its field_values as sent", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const fields = [{ name: "policy", value: "AU-1" }, { name: "adjuster", value: "Kim" }];
    await createClaim(f, "CLM-M", [
      payee("p-meta", 10, { field_values: fields }),
      payee("p-none", 10),
    ]);
    const read = async (uuid: string) =>
      await (await api(f, "GET", `/api/disbursements/CLM-M/payees/${uuid}/transaction`))
        .json() as Record<string, unknown>;
    assert.deepEqual((await read("p-meta")).field_values, fields);
    assert.deepEqual((await read("p-none")).field_values, []);
  });
});
