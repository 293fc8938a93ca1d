/** The Surface A payload (seed 2.12) filled from real data, delivered to a receiver on 127.0.0.1. */
import assert from "node:assert/strict";
import { WebhookDispatcher } from "../lib/webhooks/dispatcher.ts";
import { DocumentLinkSigner } from "../lib/documents/links.ts";
import { api, payee } from "./api_helpers.ts";
import { fundAcmeAuto, withHttpFixture } from "./http_fixture.ts";

Deno.test("a Surface A endpoint gets every 2.12 field from real data, DocumentLink as an expiring signed link", async () => {
  const received: Record<string, unknown>[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      received.push(await request.json());
      return new Response("ok");
    },
  );
  try {
    await withHttpFixture(async (f) => {
      const registered = await api(f, "POST", "/api/webhooks", {
        url: `http://127.0.0.1:${server.addr.port}/hook`,
        events: ["DISBURSEMENT.PROCESSING"],
      });
      assert.equal(registered.status, 201);
      await f.deps.databases.test.writer.write((tx) =>
        tx.execute({
          sql: "INSERT INTO fee_schedules VALUES (?, 2, 200, 100, 50)",
          args: [f.cast.acme.id],
        })
      );
      await fundAcmeAuto(f, 100_000);
      const created = await api(f, "POST", "/api/disbursements", {
        disbursement_uuid: "CLM-2.12",
        large_disbursement: false,
        payees: [payee("success+check", 250, {
          phone: "5555550100",
          address_one: "1 Main St",
          city: "Austin",
          allowed_payment_method_ids: [2],
          field_values: [{ name: "policy", value: "AU-9" }],
          payment_method_settings: { check_postage_type: "FC" },
        })],
      });
      assert.equal(created.status, 201);
      await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 1 });
      const pdf = new TextEncoder().encode("%PDF-1.7 release");
      const doc = await (await api(f, "POST", "/api/documents", {
        doc_type_id: 1,
        name: "Release",
        pdf_base64: pdf.toBase64(),
      })).json() as { document_uuid: string };
      const read = f.deps.databases.test.readClient;
      const payout = (await read.execute("SELECT id, rowid, rail_reference FROM payouts")).rows[0];
      await f.deps.databases.test.writer.write((tx) =>
        tx.execute({
          sql:
            `INSERT INTO signed_documents (id, document_id, payout_id, signed_by, signed_at, original_sha256, content)
                VALUES ('sig_9', ?, ?, 'Pat Doe', 0, 'x', ?)`,
          args: [doc.document_uuid, String(payout.id), pdf],
        })
      );
      const signer = new DocumentLinkSigner(f.deps.jwtSecret);
      const dispatcher = new WebhookDispatcher(f.deps.databases, f.deps.secretBox, f.clock, {
        batchSize: 50,
        endpointsInParallel: 2,
        perEndpointConcurrency: 1,
        timeoutMs: 2_000,
        leaseMs: 30_000,
        documentLink: async (environment, id) =>
          "http://127.0.0.1:8000" + await signer.link(environment, id, f.clock.now()),
      });
      assert.equal(await dispatcher.sweep(), 1, "only the subscribed event type");
      const payload = (received[0] as { webhookTrigger: { payload: Record<string, unknown> } })
        .webhookTrigger.payload;
      const accounts = Object.fromEntries(
        (await read.execute({
          sql: "SELECT code, id FROM ledger_accounts WHERE line_id = ?",
          args: [f.cast.acme.autoLineId],
        })).rows.map((row) => [row.code, row.id]),
      );
      const sendTransaction = (await read.execute(
        "SELECT id FROM ledger_transactions WHERE kind = 'payout.send'",
      )).rows[0].id;
      const link = new URL(String(payload.DocumentLink));
      assert.equal(link.pathname, "/documents/test/signed/sig_9");
      const served = await f.app.request(link.pathname + link.search);
      assert.deepEqual(new Uint8Array(await served.arrayBuffer()), pdf, "the link serves the PDF");
      const { DisbursementPayee, DocumentLink: _link, ...top } = payload;
      assert.deepEqual(top, {
        PaymentMethodId: 2,
        PaymentMethodName: "CheckPayment",
        EventDateTime: "2026-01-05T15:00:00.000Z",
        EventTypeId: 6,
        EventTypeName: "DISBURSEMENT.PROCESSING",
        EventReason: `DISBURSEMENT.PROCESSING: payout ${payout.id} is now funds_sent`,
        PaymentType: "DISBURSEMENT",
        DisbursementUUID: "CLM-2.12",
        DisbursementPayeeUUID: "success+check",
        SimplePaymentUUID: null,
        SimplePaymentPayee: null,
        DisbursementUrl: null,
        CheckImgURL: null,
        DDAId: null,
        CompanyName: "Acme Mutual",
        CompanyTin: f.cast.acme.tin,
        Amount: 250,
        BilledAmount: 252.5,
        PaymentMethodPayorFee: 2,
        PaymentMethodPayeeFee: 1,
        ServiceFee: 0.5,
        ExtAccountID: accounts.available,
        ExtCustomerClaimID: null,
        ExtFboAcctID: accounts.reserved,
        ExtPaidThruID: sendTransaction,
        ExtPayPalAcctID: null,
        ExtChartofaccountID: f.cast.acme.autoLineId,
        ExtCustPayorFeeID: accounts.fees_payor,
        ExtCustPayeeFeeID: accounts.fees_payee,
      });
      assert.deepEqual(DisbursementPayee, {
        Id: Number(payout.rowid),
        DisbursementId: 1,
        PayeeUUID: "success+check",
        RegisteredPayeeId: null,
        PayeeTypeId: 1,
        PayeeStatusId: 5,
        DisbursementStatusId: 5,
        Status: "Processing",
        FirstName: "Pat",
        LastName: "Doe",
        FullName: "Pat Doe",
        BussinessName: null,
        Email: "success+check@example.test",
        Phone: "5555550100",
        AddressOne: "1 Main St",
        AddressTwo: null,
        City: "Austin",
        State: "TX",
        Zip: "73301",
        Amount: 250,
        IsProcessed: true,
        IsAuthorizedByAuthParties: true,
        IsUserUnreadNotePresent: false,
        NumberOfUnreadNotes: 0,
        DocumentsCount: 0,
        CreatedAt: "2026-01-05T15:00:00.000Z",
        UpdatedAt: "2026-01-05T15:00:00.000Z",
        IssueDate: "2026-01-05T15:00:00.000Z",
        AllowedPaymentMethodIds: [2],
        PermissionRequiredFrom: [],
        DeliveryOptions: { email: true, sms: false },
        PaymentMethodSettings: { check_postage_type: "FC" },
        AuthParties: [],
        CustomDocuments: [],
        CustomFields: [{ name: "policy", value: "AU-9" }],
        Transaction: {
          PaymentMethodId: 2,
          PaymentMethodName: "CheckPayment",
          RailReference: payout.rail_reference,
          Amount: 250,
          NetAmount: 249,
        },
        TranscardToken: null,
        CompanyLogoUrl: null,
      });
    });
  } finally {
    await server.shutdown();
  }
});
