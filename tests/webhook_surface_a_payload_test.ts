/** The Surface A payload (seed 2.12) filled from real data, delivered to a receiver on 127.0.0.1. */
import assert from "node:assert/strict";
import { PDFDocument } from "pdf-lib";
import { disbursementStatus } from "../lib/payouts/disbursement_status.ts";
import type { PayoutStatus } from "../lib/payouts/states.ts";
import { failureInWords } from "../lib/webhooks/event_reason.ts";
import { WebhookDispatcher } from "../lib/webhooks/dispatcher.ts";
import { DocumentLinkSigner } from "../lib/documents/links.ts";
import { api, payee } from "./api_helpers.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

/** A one-page PDF, as an upload must be. */
async function pdfBytes(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.addPage([200, 200]);
  return await pdf.save();
}

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
      const pdf = await pdfBytes();
      const upload = async (body: Record<string, unknown>) => {
        const res = await api(f, "POST", "/api/documents", { ...body, pdf_base64: pdf.toBase64() });
        assert.equal(res.status, 201);
        return (await res.json() as { document_uuid: string }).document_uuid;
      };
      // Shown to this payee: the type-1 release and its custom notice; the ACH authorization is
      // not, as the payee was paid by check.
      const release = await upload({ doc_type_id: 1, name: "Release" });
      await upload({ doc_type_id: 2, name: "ACH authorization" });
      const notice = await upload({ doc_type_id: 4, name: "Notice" });
      await upload({ doc_type_id: 4, name: "Another payee's notice" });
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
          custom_document_uuids: [notice],
        })],
      });
      assert.equal(created.status, 201);
      await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 1 });
      const read = f.deps.databases.test.readClient;
      const payout = (await read.execute("SELECT id, rowid, rail_reference FROM payouts")).rows[0];
      await f.deps.databases.test.writer.write((tx) =>
        tx.execute({
          sql:
            `INSERT INTO signed_documents (id, document_id, payout_id, signed_by, signed_at, original_sha256, content)
                VALUES ('sig_9', ?, ?, 'Pat Doe', 0, 'x', ?)`,
          args: [release, String(payout.id), pdf],
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
        EventReason: "Payee status changed to Processing",
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
        ExtCustomerClaimID: "CLM-2.12",
        ExtFboAcctID: accounts.reserved,
        ExtPaidThruID: sendTransaction,
        ExtPayPalAcctID: null,
        ExtChartofaccountID: f.cast.acme.autoLineId,
        ExtCustPayorFeeID: accounts.fees_payor,
        ExtCustPayeeFeeID: accounts.fees_payee,
        sequence: 4,
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
        Phone: "+15555550100",
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
        DocumentsCount: 2,
        CreatedAt: "2026-01-05T15:00:00.000Z",
        UpdatedAt: "2026-01-05T15:00:00.000Z",
        IssueDate: "2026-01-05T15:00:00.000Z",
        AllowedPaymentMethodIds: [2],
        PermissionRequiredFrom: [],
        DeliveryOptions: { email: true, sms: false },
        PaymentMethodSettings: { check_postage_type: "FC" },
        AuthParties: [],
        CustomDocuments: [notice],
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

Deno.test("a disbursement's status derives from every payee: Completed when all are terminal, Canceled when all canceled, else the least advanced", () => {
  const cases: [PayoutStatus[], PayoutStatus][] = [
    [["created"], "created"],
    [["completed"], "completed"],
    [["canceled"], "canceled"],
    [["canceled", "canceled"], "canceled"],
    [["canceled", "completed"], "completed"],
    [["completed", "completed"], "completed"],
    [["completed", "funds_sent"], "funds_sent"],
    [["canceled", "modality_offered"], "modality_offered"],
    [["funds_sent", "modality_selected"], "modality_selected"],
    [["funds_sent", "failed"], "failed"],
    [["modality_selected", "failed"], "failed"],
    [["failed", "modality_offered"], "modality_offered"],
    [["modality_offered", "awaiting_endorsement"], "awaiting_endorsement"],
    [["awaiting_endorsement", "created"], "created"],
    [["created", "pending_funds"], "pending_funds"],
    [["completed", "canceled", "failed", "funds_sent"], "failed"],
  ];
  for (const [statuses, expected] of cases) {
    assert.equal(disbursementStatus(statuses), expected, statuses.join(", "));
  }
  assert.throws(() => disbursementStatus([]), /has a payee/);
});

Deno.test("failure reasons read as words with the rail's code, never an internal id or state", () => {
  const cases: [string, number | null, string][] = [
    ["R03", 1, "ACH returned R03: no account / unable to locate account"],
    ["R01", 1, "ACH returned R01: insufficient funds"],
    ["R99", 1, "ACH returned R99"],
    [
      "card_declined",
      4,
      "Instant deposit declined: the card issuer refused the payment (card_declined)",
    ],
    [
      "RECEIVER_UNREGISTERED",
      7,
      "PayPal failed: no PayPal account has the payee's e-mail or phone (RECEIVER_UNREGISTERED)",
    ],
    [
      "blocked",
      6,
      "Venmo blocked: PayPal blocked the payment to the payee's Venmo account (blocked)",
    ],
    [
      "paypal_batch_denied",
      7,
      "PayPal not paid: PayPal denied the whole batch it was sent in (paypal_batch_denied)",
    ],
    [
      "returned_undeliverable",
      2,
      "Check returned: undeliverable at the payee's address (returned_undeliverable)",
    ],
    ["rail_unavailable", 1, "ACH not sent: the payment network was unavailable (rail_unavailable)"],
    [
      "rail_not_configured",
      6,
      "Venmo not sent: no live Venmo rail is configured (rail_not_configured)",
    ],
    ["sanctions", 3, "Virtual card stopped: held by sanctions screening (sanctions)"],
    [
      "sanctions_review",
      1,
      "ACH stopped: an operator rejected it after sanctions screening (sanctions_review)",
    ],
    [
      "sanctions_list_missing",
      1,
      "ACH not sent: no sanctions list is loaded (sanctions_list_missing)",
    ],
    ["something_new", 5, "Digital check failed (something_new)"],
    ["something_new", null, "Payment failed (something_new)"],
  ];
  for (const [code, methodId, words] of cases) {
    assert.equal(failureInWords(code, methodId), words, code);
  }
});

/** Attempts every delivery due now once. */
async function deliverAll(f: HttpFixture): Promise<number> {
  const dispatcher = new WebhookDispatcher(f.deps.databases, f.deps.secretBox, f.clock, {
    batchSize: 100,
    endpointsInParallel: 2,
    perEndpointConcurrency: 1,
    timeoutMs: 2_000,
    leaseMs: 30_000,
  });
  // Under load an attempt can outlast the sweep's wait and leave the endpoint's next delivery
  // queued behind it: sweep again until every due delivery was attempted and recorded.
  let started = 0;
  for (let round = 0; round < 20; round++) {
    const more = await dispatcher.sweep();
    await dispatcher.settled();
    if (more === 0) return started;
    started += more;
  }
  throw new Error("deliveries still due after 20 sweeps");
}

Deno.test("Surface A payloads: DisbursementStatusId from every payee, FAILED in words with the rail code, documents the payee is shown, null only where nothing is known", async () => {
  const received: Record<string, unknown>[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      received.push(
        (await request.json() as { webhookTrigger: { payload: Record<string, unknown> } })
          .webhookTrigger.payload,
      );
      return new Response("ok");
    },
  );
  try {
    await withHttpFixture(async (f) => {
      const url = `http://127.0.0.1:${server.addr.port}/hook`;
      assert.equal((await api(f, "POST", "/api/webhooks", { url })).status, 201);
      await fundAcmeAuto(f, 100_000);
      const pdf = (await pdfBytes()).toBase64();
      for (const [docTypeId, name] of [[1, "Terms"], [2, "ACH authorization"]] as const) {
        const res = await api(f, "POST", "/api/documents", {
          doc_type_id: docTypeId,
          name,
          pdf_base64: pdf,
        });
        assert.equal(res.status, 201);
      }
      const created = await api(f, "POST", "/api/disbursements", {
        disbursement_uuid: "CLM-MULTI",
        large_disbursement: false,
        payees: [
          payee("fail+ach", 30, { allowed_payment_method_ids: [1] }),
          payee("noaction", 20, { allowed_payment_method_ids: [1, 2] }),
        ],
      });
      assert.equal(created.status, 201);
      // The offers, fail+ach's choice and its send; the R03 return two business days later.
      await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 1 });
      await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 4 * 86_400 });
      for (const uuid of ["fail+ach", "noaction"]) {
        const canceled = await api(f, "POST", `/api/disbursements/CLM-MULTI/payees/${uuid}/cancel`);
        assert.equal(canceled.status, 200, uuid);
      }
      assert.equal(await deliverAll(f), received.length);

      const seen = received.map((p) => {
        const payee = p.DisbursementPayee as Record<string, unknown>;
        return [
          p.EventTypeName,
          payee.PayeeUUID,
          payee.PayeeStatusId,
          payee.DisbursementStatusId,
          payee.DocumentsCount,
          p.EventReason,
        ];
      });
      const at = (name: string, uuid: string) =>
        seen.filter((row) => row[0] === name && row[1] === uuid);
      // [event, payee, its status, the disbursement's, documents shown, reason]
      assert.deepEqual(at("DISBURSEMENT.CREATED", "noaction"), [
        ["DISBURSEMENT.CREATED", "noaction", 1, 1, 1, "Payee status changed to Created"],
      ]);
      assert.deepEqual(at("DISBURSEMENT.PROCESSING", "fail+ach"), [
        ["DISBURSEMENT.PROCESSING", "fail+ach", 5, 3, 2, "Payee status changed to Processing"],
      ], "the other payee has yet to choose; the ACH authorization is shown with ACH chosen");
      assert.deepEqual(at("DISBURSEMENT.FAILED", "fail+ach"), [
        [
          "DISBURSEMENT.FAILED",
          "fail+ach",
          7,
          3,
          2,
          "ACH returned R03: no account / unable to locate account",
        ],
      ]);
      assert.deepEqual(at("DISBURSEMENT.CANCELED", "fail+ach"), [
        ["DISBURSEMENT.CANCELED", "fail+ach", 8, 3, 1, "Payee status changed to Canceled"],
      ], "one payee canceled, the other still offered: the disbursement is offered");
      assert.deepEqual(at("DISBURSEMENT.CANCELED", "noaction"), [
        ["DISBURSEMENT.CANCELED", "noaction", 8, 8, 1, "Payee status changed to Canceled"],
      ], "every payee canceled: Canceled, not Completed");
      for (const payload of received) {
        const text = JSON.stringify(payload.EventReason);
        assert.doesNotMatch(text, /po_|funds_sent|is now/, "no internal id or state name");
        assert.equal(payload.ExtCustomerClaimID, "CLM-MULTI");
      }
      const offered = received.find((p) =>
        p.EventTypeName === "DISBURSEMENT.PAYMENT_METHOD_OFFERED" &&
        (p.DisbursementPayee as Record<string, unknown>).PayeeUUID === "noaction"
      )!;
      assert.deepEqual(
        [offered.PaymentMethodId, offered.PaymentMethodName, offered.ExtPayPalAcctID],
        [null, null, null],
        "before a choice there is no method (nullable in the OpenAPI document)",
      );
    });
  } finally {
    await server.shutdown();
  }
});

Deno.test("the OpenAPI document describes both webhook bodies; every field the service sends as null is nullable", async () => {
  await withHttpFixture(async (f) => {
    const doc = await (await f.app.request("/openapi.json")).json() as {
      webhooks: Record<string, unknown>;
      components: { schemas: Record<string, { properties: Record<string, { type: unknown }> }> };
    };
    assert.deepEqual(Object.keys(doc.webhooks), ["surfaceAEvent", "v1Event"]);
    const nullable = (schema: string) =>
      Object.entries(doc.components.schemas[schema].properties)
        .filter(([, field]) => Array.isArray(field.type) && field.type.includes("null"))
        .map(([name]) => name);
    assert.deepEqual(nullable("SurfaceAWebhookPayload"), [
      "PaymentMethodId",
      "DisbursementUUID",
      "DisbursementPayeeUUID",
      "SimplePaymentUUID",
      "SimplePaymentPayee",
      "DisbursementUrl",
      "DocumentLink",
      "CheckImgURL",
      "DDAId",
      "Amount",
      "BilledAmount",
      "ExtCustomerClaimID",
      "ExtPaidThruID",
      "ExtPayPalAcctID",
      "sequence",
    ]);
    const method = doc.components.schemas.SurfaceAWebhookPayload.properties.PaymentMethodName as {
      enum?: unknown[];
    };
    assert.ok(method.enum?.includes(null), "PaymentMethodName is null before a choice");
  });
});
