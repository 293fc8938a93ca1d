/**
 * Endorsements and e-signatures through the portal: the payee signs type-1 documents, asks each
 * authorization party through its own link, parties verify, read type-3 documents and endorse or
 * decline; the company sees each decision as an event and gets signed copies with certificates.
 */
import assert from "node:assert/strict";
import { PDFDocument } from "pdf-lib";
import { sha256Hex } from "../lib/platform/keys.ts";
import { api, parties, payee } from "./api_helpers.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { lastMessage, offeredPayee, pathOf, PortalBrowser, verify } from "./portal_helpers.ts";
import { listScheduledJobs, retryParkedJob } from "../lib/admin/jobs.ts";
import { pdfOfObjects } from "./pdf_helpers.ts";

const inboxOn = { SANDBOX_INBOX: "1" };

async function pdfNamed(title: string): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.addPage([612, 792]).drawText(title, { x: 72, y: 700, size: 18 });
  return await pdf.save();
}

async function upload(f: HttpFixture, name: string, docTypeId: number, pdf: Uint8Array) {
  const res = await api(f, "POST", "/api/documents", {
    doc_type_id: docTypeId,
    name,
    is_sign_required: true,
    pdf_base64: pdf.toBase64(),
  });
  assert.equal(res.status, 201, await res.text());
}

/** A payee whose payment needs the lienholder (contact from the company) and a co-owner (none). */
async function payeeWithParties(f: HttpFixture) {
  await fundAcmeAuto(f, 100_000_00);
  const [lienholder, coOwner] = parties;
  const created = await api(f, "POST", "/api/disbursements", {
    disbursement_uuid: "CLM-E",
    large_disbursement: false,
    payees: [payee("pat", 500, { permission_required_from: ["lienholder", "co-owner"] })],
    authorization_parties: [lienholder, { ...coOwner, email: undefined, phone: undefined }],
  });
  assert.equal(created.status, 201, await created.text());
  await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 1 });
  const notice = await lastMessage(f, "pat@example.test", /needs approval/);
  return pathOf(notice.links[0]);
}

async function payoutStatus(f: HttpFixture) {
  const { rows } = await f.deps.databases.test.readClient.execute("SELECT status FROM payouts");
  return String(rows[0].status);
}

async function eventNames(f: HttpFixture): Promise<string[]> {
  const { rows } = await f.deps.databases.test.readClient.execute(
    "SELECT event_type_id, json_extract(data, '$.reason') AS reason FROM events ORDER BY rowid",
  );
  return rows.map((r) => `${r.event_type_id}: ${r.reason}`);
}

Deno.test("portal endorsements: sign, ask both parties, both endorse, the payee is told and offered", async () => {
  await withHttpFixture(async (f) => {
    const release = await pdfNamed("Release of claim");
    await upload(f, "Release of claim", 1, release);
    await upload(f, "Lien release", 3, await pdfNamed("Lien release"));
    const linkPath = await payeeWithParties(f);
    const payeeBrowser = new PortalBrowser(f);
    await verify(payeeBrowser, linkPath, "pat@example.test");

    await payeeBrowser.get(linkPath);
    assert.match(payeeBrowser.lastHtml, /<h1>Read and sign<\/h1>/);
    assert.match(payeeBrowser.lastHtml, /Release of claim \(PDF\)/);
    const docPath = /href="([^"]+\/documents\/[^"]+)"/.exec(payeeBrowser.lastHtml)![1];
    const original = await payeeBrowser.get(docPath);
    assert.equal(original.status, 200);
    assert.equal(original.headers.get("Content-Type"), "application/pdf");
    assert.deepEqual(new Uint8Array(await original.arrayBuffer()), release);

    const unsigned = await payeeBrowser.post(`${linkPath}/sign`, { typed_name: "Pat Doe" });
    assert.equal(unsigned.status, 422);
    assert.match(payeeBrowser.lastHtml, /Tick the box to agree/);
    const signed = await payeeBrowser.post(`${linkPath}/sign`, {
      typed_name: "Pat Doe",
      consent: "yes",
    });
    assert.equal(signed.status, 303);
    await payeeBrowser.get(linkPath);
    assert.match(payeeBrowser.lastHtml, /<h1>Approvals needed<\/h1>/);
    assert.match(payeeBrowser.lastHtml, /lien@example\.test/);

    // The company gave the lienholder's contact: one click. The co-owner's: the payee enters it.
    const asked = await payeeBrowser.post(`${linkPath}/parties/lienholder`, {});
    assert.equal(asked.status, 200);
    assert.match(payeeBrowser.lastHtml, /We sent Lee Holder a link to approve/);
    const own = await payeeBrowser.post(`${linkPath}/parties/co-owner`, {
      "party-co-owner-email": "PAT@example.test",
    });
    assert.equal(own.status, 422);
    assert.match(payeeBrowser.lastHtml, /their own e-mail or phone, not yours/);
    const blank = await payeeBrowser.post(`${linkPath}/parties/co-owner`, {});
    assert.equal(blank.status, 422);
    await payeeBrowser.post(`${linkPath}/parties/co-owner`, {
      "party-co-owner-email": "cory@example.test",
    });
    assert.match(payeeBrowser.lastHtml, /We sent Cory Owner a link/);

    for (
      const [to, name] of [["lien@example.test", "Lee Holder"], ["cory@example.test", "Cory Owner"]]
    ) {
      const request = await lastMessage(f, to, /approval is needed/);
      const partyPath = pathOf(request.links[0]);
      const party = new PortalBrowser(f);
      await verify(party, partyPath, to);
      await party.get(partyPath);
      assert.match(party.lastHtml, /<h1>Approve a payment<\/h1>/);
      assert.match(party.lastHtml, /Lien release \(PDF\)/);
      assert.doesNotMatch(party.lastHtml, /Release of claim/, "type-1 documents are the payee's");
      const noConsent = await party.post(`${partyPath}/endorse`, { typed_name: name });
      assert.equal(noConsent.status, 422);
      assert.match(party.lastHtml, /Tick the box to approve/);
      const endorsed = await party.post(`${partyPath}/endorse`, {
        typed_name: name,
        consent: "yes",
      });
      assert.equal(endorsed.status, 303);
      await party.get(partyPath);
      assert.match(party.lastHtml, /You approved the payment of \$500\.00 to Pat Doe/);
      // The payee's link is not the party's: a party cannot choose the method.
      assert.equal((await party.get(`${partyPath}/method?method=ach`)).status, 200);
      assert.doesNotMatch(party.lastHtml, /Routing number/);
    }

    assert.equal(await payoutStatus(f), "modality_offered");
    const events = await eventNames(f);
    assert.equal(events.filter((e) => e.startsWith("3: ")).length, 2);
    assert.match(
      events.find((e) => e.startsWith("3: ") && e.includes("co-owner"))!,
      /cory@example\.test, entered by the payee/,
    );
    assert.ok(events.some((e) => e.startsWith("4: ")), "offered after the last endorsement");

    const allIn = await lastMessage(f, "pat@example.test", /every approval is in/i);
    const fresh = new PortalBrowser(f);
    await verify(fresh, pathOf(allIn.links[0]), "pat@example.test");
    await fresh.get(pathOf(allIn.links[0]));
    assert.match(fresh.lastHtml, /<h1>Choose how to be paid<\/h1>/);

    const listed = await api(f, "GET", "/api/disbursements/CLM-E/payees/pat/signed-documents");
    const documents = await listed.json() as Record<string, string>[];
    assert.deepEqual(documents.map((d) => [d.DocumentName, d.SignedBy]).sort(), [
      ["Lien release", "Cory Owner"],
      ["Lien release", "Lee Holder"],
      ["Release of claim", "Pat Doe"],
    ]);
    const payeeCopy = documents.find((d) => d.SignedBy === "Pat Doe")!;
    const link = new URL(payeeCopy.DocumentLink);
    const copy = new Uint8Array(
      await (await f.app.request(link.pathname + link.search)).arrayBuffer(),
    );
    const stamped = await PDFDocument.load(copy);
    assert.equal(stamped.getPageCount(), 2, "the original page and the certificate page");
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT original_sha256, signer_user_agent FROM signed_documents WHERE signed_by = 'Pat Doe'",
    );
    assert.equal(rows[0].original_sha256, await sha256Hex(release));
  }, inboxOn);
});

Deno.test("portal endorsements: a party declines → event 11, the payout keeps waiting", async () => {
  await withHttpFixture(async (f) => {
    const linkPath = await payeeWithParties(f);
    const payeeBrowser = new PortalBrowser(f);
    await verify(payeeBrowser, linkPath, "pat@example.test");
    await payeeBrowser.get(linkPath);
    await payeeBrowser.post(`${linkPath}/parties/lienholder`, {});
    const request = await lastMessage(f, "lien@example.test", /approval is needed/);
    const partyPath = pathOf(request.links[0]);
    const party = new PortalBrowser(f);
    await verify(party, partyPath, "lien@example.test");
    await party.get(partyPath);
    const noName = await party.post(`${partyPath}/decline`, { decline_name: "" });
    assert.equal(noName.status, 422);
    const declined = await party.post(`${partyPath}/decline`, { decline_name: "Lee Holder" });
    assert.equal(declined.status, 303);
    await party.get(partyPath);
    assert.match(party.lastHtml, /You declined the payment/);
    assert.equal(await payoutStatus(f), "awaiting_endorsement");
    const events = await eventNames(f);
    assert.match(events.find((e) => e.startsWith("11: "))!, /party lienholder .* declined/);
    await payeeBrowser.get(linkPath);
    assert.match(payeeBrowser.lastHtml, /Status: Declined/);
  }, inboxOn);
});

Deno.test("portal endorsements: a signature refused in the unit (a one-time document taken meanwhile) rolls the endorsement back", async () => {
  await withHttpFixture(async (f) => {
    await upload(f, "Lien release", 3, await pdfNamed("Lien release"));
    const linkPath = await payeeWithParties(f);
    const payeeBrowser = new PortalBrowser(f);
    await verify(payeeBrowser, linkPath, "pat@example.test");
    await payeeBrowser.get(linkPath);
    await payeeBrowser.post(`${linkPath}/parties/lienholder`, {});
    const request = await lastMessage(f, "lien@example.test", /approval is needed/);
    const partyPath = pathOf(request.links[0]);
    const party = new PortalBrowser(f);
    await verify(party, partyPath, "lien@example.test");
    await party.get(partyPath);
    assert.match(party.lastHtml, /Lien release \(PDF\)/);

    // The writer is held by a unit that, once released, hands the document to another payout as
    // a one-time document: the endorsement's copy is stamped before that, stored after it.
    const database = f.deps.databases.test;
    const gate = Promise.withResolvers<void>();
    const taken = database.writer.write(async (tx) => {
      await gate.promise;
      await tx.execute(
        "UPDATE documents SET one_time_use = 1, used_by_payout_id = 'pay_another' WHERE name = 'Lien release'",
      );
    });
    const queued = Promise.withResolvers<void>();
    const write = database.writer.write.bind(database.writer);
    database.writer.write = ((unit) => {
      queued.resolve();
      return write(unit);
    }) as typeof database.writer.write;
    const endorsing = party.post(`${partyPath}/endorse`, {
      typed_name: "Lee Holder",
      consent: "yes",
    });
    await queued.promise;
    database.writer.write = write;
    gate.resolve();
    await taken;
    const endorsed = await endorsing;

    assert.equal(endorsed.status, 409);
    assert.match(party.lastHtml, /A document changed meanwhile\. Please read again\./);
    assert.match(party.lastHtml, /<h1>Approve a payment<\/h1>/, "still asked to decide");
    const { rows: endorsements } = await database.readClient.execute(
      "SELECT party_uuid, status, typed_name, decided_at FROM endorsements ORDER BY party_uuid",
    );
    assert.deepEqual(
      endorsements.map((r) => [r.party_uuid, r.status, r.typed_name, r.decided_at]),
      [
        ["co-owner", "pending", null, null],
        ["lienholder", "pending", null, null],
      ],
    );
    const { rows: copies } = await database.readClient.execute(
      "SELECT count(*) AS n FROM signed_documents",
    );
    assert.equal(Number(copies[0].n), 0);
    assert.deepEqual((await eventNames(f)).filter((e) => e.startsWith("3: ")), []);
    assert.equal(await payoutStatus(f), "awaiting_endorsement");
  }, inboxOn);
});

Deno.test("portal documents: a one-time document goes to one payee only, signed or not (409 at a second create)", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000_00);
    const uploadOneTime = async (name: string, isSignRequired: boolean) => {
      const uploaded = await api(f, "POST", "/api/documents", {
        doc_type_id: 4,
        name,
        is_sign_required: isSignRequired,
        one_time_use: true,
        pdf_base64: (await pdfNamed(name)).toBase64(),
      });
      assert.equal(uploaded.status, 201);
      return (await uploaded.json() as { document_uuid: string }).document_uuid;
    };
    const signed = await uploadOneTime("Settlement offer", true);
    const readOnly = await uploadOneTime("Claim summary", false);
    const create = (claim: string, who: string, uuids: string[]) =>
      api(f, "POST", "/api/disbursements", {
        disbursement_uuid: claim,
        large_disbursement: false,
        payees: [payee(who, 10, { custom_document_uuids: uuids })],
      });
    const first = await create("CLM-1X", "first", [signed, readOnly]);
    assert.equal(first.status, 201);
    const record = await first.json() as { payees: { custom_document_uuids: string[] }[] };
    assert.deepEqual(record.payees.map((p) => p.custom_document_uuids), [[signed, readOnly]]);

    // Given once: another payee of a later create is refused, whether it needs a signature or not.
    const refusedFor = async (claim: string, who: string, uuid: string) => {
      const again = await create(claim, who, [uuid]);
      assert.equal(again.status, 409, `${uuid} to ${who}`);
      const issue =
        `one-time document ${uuid} is for one payee and was already given to another payee`;
      assert.deepEqual(await again.json(), {
        name: "CONFLICT",
        message: issue,
        details: [{ Issue: issue, Field: "payees.0.custom_document_uuids.0", Location: "body" }],
      });
    };
    await refusedFor("CLM-1Y", "second", signed);
    await refusedFor("CLM-1Y", "second", readOnly);

    // The payee it went to reads and signs it.
    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 1 });
    const to = "first@example.test";
    const path = pathOf((await lastMessage(f, to, /has a payment/)).links[0]);
    const browser = new PortalBrowser(f);
    await verify(browser, path, to);
    await browser.get(path);
    assert.match(browser.lastHtml, /<h1>Read and sign<\/h1>/);
    await browser.post(`${path}/sign`, { typed_name: "First Payee", consent: "yes" });
    await browser.get(path);
    assert.match(browser.lastHtml, /<h1>Choose how to be paid<\/h1>/);
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT signed_by FROM signed_documents",
    );
    assert.deepEqual(rows.map((r) => r.signed_by), ["First Payee"]);
    await refusedFor("CLM-2X", "third", signed);
  }, inboxOn);
});

Deno.test("custom_document_uuids: unknown, another company's or not type 4 is a 400 naming the entry; nothing is held", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000_00);
    const upload = async (docTypeId: number, name: string) => {
      const res = await api(f, "POST", "/api/documents", {
        doc_type_id: docTypeId,
        name,
        is_sign_required: true,
        pdf_base64: (await pdfNamed(name)).toBase64(),
      });
      assert.equal(res.status, 201);
      return (await res.json() as { document_uuid: string }).document_uuid;
    };
    const release = await upload(1, "Release");
    const custom = await upload(4, "Settlement offer");
    const cases: [unknown, number, string, string][] = [
      [
        ["doc_missing"],
        400,
        "payees.0.custom_document_uuids.0",
        "no document doc_missing: upload it with POST /api/documents first",
      ],
      [
        [custom, release],
        400,
        "payees.0.custom_document_uuids.1",
        `document ${release} is of doc_type_id 1; custom documents are type 4`,
      ],
      [
        "not-a-list",
        400,
        "payees.0.custom_document_uuids",
        "custom_document_uuids must be an array",
      ],
      [
        Array.from({ length: 21 }, (_, i) => `d${i}`),
        400,
        "payees.0.custom_document_uuids",
        "custom_document_uuids holds at most 20 documents",
      ],
    ];
    for (const [uuids, status, field, issue] of cases) {
      const res = await api(f, "POST", "/api/disbursements", {
        disbursement_uuid: "CLM-DOCS",
        large_disbursement: false,
        payees: [payee("p1", 10, { custom_document_uuids: uuids })],
      });
      assert.equal(res.status, status, JSON.stringify(uuids));
      const body = await res.json() as { details: { Issue: string; Field: string }[] };
      assert.deepEqual(body.details.map((d) => [d.Field, d.Issue]), [[field, issue]]);
    }
    const asBeacon = { key: f.cast.bob.keyTest, tin: f.cast.beacon.tin };
    const foreign = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-DOCS",
      large_disbursement: false,
      payees: [payee("p1", 10, { custom_document_uuids: [custom] })],
    }, asBeacon);
    assert.equal(foreign.status, 400, "another company's document is unknown to Beacon");
    assert.equal(
      (await foreign.json() as { details: { Issue: string }[] }).details[0].Issue,
      `no document ${custom}: upload it with POST /api/documents first`,
    );
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT count(*) AS n FROM disbursements",
    );
    assert.equal(Number(rows[0].n), 0, "nothing was created or held");
  }, inboxOn);
});

/** Runs `fn` with console.error captured: the error lines it wrote. */
async function errorLinesOf(fn: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const consoleError = console.error;
  console.error = (line: string) => lines.push(line);
  try {
    await fn();
  } finally {
    console.error = consoleError;
  }
  return lines;
}

Deno.test("portal documents: a stored document damaged after upload is a clear page, not a 500; operators get a log line and one parked check", async () => {
  await withHttpFixture(async (f) => {
    const release = await pdfNamed("Release of claim");
    await upload(f, "Release of claim", 1, release);
    const database = f.deps.databases.test;
    const { rows } = await database.readClient.execute("SELECT id FROM documents");
    const documentId = String(rows[0].id);
    // Damaged in storage after its upload: pdf-lib opens it, but it has no page tree.
    const store = (content: Uint8Array) =>
      database.writer.write((tx) =>
        tx.execute({
          sql: "UPDATE documents SET content = ? WHERE id = ?",
          args: [content, documentId],
        })
      );
    await store(pdfOfObjects(["<< /Type /Catalog >>"]));

    const { linkPath } = await offeredPayee(f, "pat");
    const browser = new PortalBrowser(f);
    await verify(browser, linkPath, "pat@example.test");
    await browser.get(linkPath);
    assert.match(browser.lastHtml, /<h1>Read and sign<\/h1>/);
    const sign = () => browser.post(`${linkPath}/sign`, { typed_name: "Pat Doe", consent: "yes" });

    const statuses: number[] = [];
    const errors = await errorLinesOf(async () => {
      statuses.push((await sign()).status);
      assert.match(
        browser.lastHtml,
        /We cannot prepare (&quot;|")Release of claim(&quot;|") for your signature right now, so nothing was signed\./,
      );
      assert.match(browser.lastHtml, /<h1>Read and sign<\/h1>/, "still asked to sign");
      browser.setCookie("portal_lang", "es");
      await browser.get(linkPath);
      statuses.push((await sign()).status);
      assert.match(
        browser.lastHtml,
        /No podemos preparar (&quot;|")Release of claim(&quot;|") para su firma en este momento/,
      );
    });
    assert.deepEqual(statuses, [409, 409]);
    assert.equal(errors.length, 2, "one error line per refused signature");
    const logged = JSON.parse(errors[0]) as Record<string, unknown>;
    const payoutId = (await database.readClient.execute("SELECT id FROM payouts")).rows[0].id;
    assert.deepEqual({ ...logged, error: undefined }, {
      level: "error",
      msg: "a stored document cannot be stamped: signing it is refused",
      environment: "test",
      company_id: f.cast.acme.id,
      document_id: documentId,
      payout_id: payoutId,
      error: undefined,
    });
    assert.match(String(logged.error), /^document "Release of claim" cannot be stamped: /);
    const copies = await database.readClient.execute("SELECT count(*) AS n FROM signed_documents");
    assert.equal(Number(copies.rows[0].n), 0, "nothing was signed");

    // One parked check for the document, however many signers met it.
    const parked = await listScheduledJobs(database, true);
    assert.equal(parked.jobs.length, 1);
    const [check] = parked.jobs;
    assert.deepEqual([check.kind, check.subject, check.company_id], [
      "document.check",
      documentId,
      f.cast.acme.id,
    ]);
    assert.match(
      String(check.error),
      new RegExp(
        `^document "Release of claim" cannot be stamped: .*; payees cannot sign document ${documentId} until it is restored \\(then jobs:retry this check\\)$`,
      ),
    );

    // Retried while still damaged, the check parks again; restored, it clears and signing works.
    const retry = async () => {
      assert.ok((await retryParkedJob(database, check.id, f.clock.now())).ok);
      await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 1 });
    };
    await errorLinesOf(retry);
    assert.equal((await listScheduledJobs(database, true)).jobs.length, 1, "still damaged");
    await store(release);
    await retry();
    assert.deepEqual((await listScheduledJobs(database, true)).jobs, [], "the record cleared");
    assert.equal((await sign()).status, 303);
    assert.equal(
      Number(
        (await database.readClient.execute(
          "SELECT count(*) AS n FROM signed_documents",
        )).rows[0].n,
      ),
      1,
    );
  }, inboxOn);
});
