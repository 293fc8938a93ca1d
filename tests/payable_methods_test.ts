import assert from "node:assert/strict";
import { api, payee } from "./api_helpers.ts";
import { STAND_IN_MICR_FONT } from "./check_pdf_text.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { livePayableMethodIds } from "../lib/payouts/payable.ts";
import { offeredMethod, type PortalLink, portalPayout } from "../lib/portal/service.ts";

const asAliceLive = (f: HttpFixture) => ({ key: f.cast.alice.keyLive, tin: f.cast.acme.tin });

function v1Live(f: HttpFixture, method: string, path: string, body?: unknown) {
  return f.app.request(path, {
    method,
    headers: {
      Authorization: `Bearer ${f.cast.acmeAutoKeyLive}`,
      "Content-Type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/**
 * Stored bank settings make ACH payable in live (their content is the bank-settings work's), and
 * postal checks with `hasCheckAccount`.
 */
async function storeLiveBankSettings(f: HttpFixture, hasCheckAccount = false) {
  await f.deps.databases.live.writer.write((tx) =>
    tx.execute({
      sql: `INSERT INTO bank_settings (company_id, settings_sealed, fingerprint, has_check_account,
              updated_by, updated_at, created_at) VALUES (?, 'sealed', 'fingerprint', ?, NULL, ?, ?)`,
      args: [f.cast.acme.id, hasCheckAccount ? 1 : 0, f.clock.now(), f.clock.now()],
    })
  );
}

async function loadLiveSanctionsList(f: HttpFixture) {
  await f.deps.databases.live.writer.write((tx) =>
    tx.execute({
      sql: `INSERT INTO sanctions_lists (id, sha256, entry_count, file_name, loaded_by, loaded_at,
              replaced_at) VALUES ('sdn_1', ?, 0, 'sdn.csv', NULL, ?, NULL)`,
      args: ["00".repeat(32), f.clock.now()],
    })
  );
}

async function liveCount(f: HttpFixture, table: string): Promise<number> {
  const { rows } = await f.deps.databases.live.readClient.execute(
    `SELECT COUNT(*) AS n FROM ${table}`,
  );
  return Number(rows[0].n);
}

const largeLive = (allowed: number[]) => ({
  disbursement_uuid: "D-LIVE",
  large_disbursement: true,
  payees: [
    payee("P-1", 100, { allowed_payment_method_ids: [1] }),
    payee("P-2", 100, { allowed_payment_method_ids: allowed }),
  ],
});

const NO_LIVE_RAILS = {
  ach: false,
  check: false,
  digitalCheck: false,
  paypal: false,
  vcc: false,
  instantDeposit: false,
};

Deno.test("payable methods: live pays ACH only, and only with bank settings; test pays everything", () => {
  assert.deepEqual([...livePayableMethodIds(NO_LIVE_RAILS)], []);
  assert.deepEqual([...livePayableMethodIds({ ...NO_LIVE_RAILS, ach: true })], [1]);
  assert.deepEqual([...livePayableMethodIds({ ...NO_LIVE_RAILS, vcc: true })], [3]);
  assert.deepEqual([...livePayableMethodIds({ ...NO_LIVE_RAILS, instantDeposit: true })], [4]);
});

Deno.test("POST /api/disbursements in live: no payable method is a 400 naming the methods and the field; nothing is written", async () => {
  await withHttpFixture(async (f) => {
    const noBank = await api(f, "POST", "/api/disbursements", largeLive([1, 2]), asAliceLive(f));
    assert.equal(noBank.status, 400);
    const noBankMessage =
      "no rail is configured in live for the allowed methods ach (1): none is configured for this company (live pays ACH and checks once its bank settings are stored, PayPal and Venmo once its PayPal settings are, virtual cards once its Lithic settings are, instant deposit once its Increase settings are)";
    assert.deepEqual(await noBank.json(), {
      name: "VALIDATION_ERROR",
      message: noBankMessage,
      details: [{
        Issue: noBankMessage,
        Field: "payees.0.allowed_payment_method_ids",
        Location: "body",
      }],
    });

    await storeLiveBankSettings(f);
    const checkOnly = await api(f, "POST", "/api/disbursements", largeLive([2, 7]), asAliceLive(f));
    assert.equal(checkOnly.status, 400);
    const checkMessage =
      "no rail is configured in live for the allowed methods check (2), paypal (7): only ach (1) can be paid";
    assert.deepEqual(await checkOnly.json(), {
      name: "VALIDATION_ERROR",
      message: checkMessage,
      details: [{
        Issue: checkMessage,
        Field: "payees.1.allowed_payment_method_ids",
        Location: "body",
      }],
    });
    assert.equal(await liveCount(f, "disbursements"), 0);
    assert.equal(await liveCount(f, "payouts"), 0);
  });
});

Deno.test("a live create while no sanctions list is loaded is a 409 sanctions_list_missing; with one it is accepted", async () => {
  await withHttpFixture(async (f) => {
    await storeLiveBankSettings(f);
    const body = largeLive([1, 2]);
    const refused = await api(f, "POST", "/api/disbursements", body, asAliceLive(f));
    assert.equal(refused.status, 409);
    assert.deepEqual(await refused.json(), {
      name: "CONFLICT",
      message:
        "no sanctions (OFAC SDN) list is loaded in live, so payees cannot be screened: an operator loads it with `deno task admin ofac:load --file <sdn.csv>`",
      details: [],
    });
    assert.equal(await liveCount(f, "payouts"), 0);

    await loadLiveSanctionsList(f);
    const accepted = await api(f, "POST", "/api/disbursements", body, asAliceLive(f));
    assert.equal(accepted.status, 201);
    const record = await accepted.json() as { payees: { allowed_payment_method_ids: number[] }[] };
    // The payee keeps what the company allowed; the portal offers only what can be paid.
    assert.deepEqual(record.payees.map((p) => p.allowed_payment_method_ids), [[1], [1, 2]]);

    const { rows } = await f.deps.databases.live.readClient.execute(
      "SELECT id FROM payouts WHERE payee_uuid = 'P-2'",
    );
    const link = { payoutId: String(rows[0].id), companyId: f.cast.acme.id } as PortalLink;
    const shown = await portalPayout(f.deps.databases.live, link, f.deps.config.checkMicrFont);
    assert.deepEqual(shown.allowedPaymentMethodIds, [1]);
    const offered = { ...shown, status: "modality_offered" as const };
    assert.deepEqual(offeredMethod({ ...link, partyUuid: null }, offered, "ach"), {
      code: "ach",
      id: 1,
      name: "ACHPayment",
    });
    assert.equal(offeredMethod({ ...link, partyUuid: null }, offered, "check"), null);
  });
});

Deno.test("digital checks in live: payable only when CHECK_MICR_FONT named a font at start", async () => {
  const createDigitalCheck = async (f: HttpFixture) => {
    await storeLiveBankSettings(f, true);
    await loadLiveSanctionsList(f);
    return await api(f, "POST", "/api/disbursements", largeLive([5]), asAliceLive(f));
  };
  await withHttpFixture(async (f) => {
    const refused = await createDigitalCheck(f);
    assert.equal(refused.status, 400);
    assert.equal(
      (await refused.json() as { message: string }).message,
      "no rail is configured in live for the allowed methods digital_check (5): only ach (1), check (2) can be paid",
    );
    assert.equal(await liveCount(f, "payouts"), 0);
  });
  await withHttpFixture(async (f) => {
    const accepted = await createDigitalCheck(f);
    assert.equal(accepted.status, 201);
    assert.equal(await liveCount(f, "payouts"), 2);
  }, { CHECK_MICR_FONT: STAND_IN_MICR_FONT });
});

Deno.test("simple payments and /v1 in live: no payable method is a 400 naming the surface's field", async () => {
  await withHttpFixture(async (f) => {
    await storeLiveBankSettings(f);
    await loadLiveSanctionsList(f);
    const simple = await api(f, "POST", "/api/simple-payments", {
      simple_payment_uuid: "SP-1",
      amount: 42.5,
      first_name: "Sam",
      last_name: "Payee",
      email: "sam@example.test",
      delivery_options: { email: true, sms: false },
      memo: "Refund of premium",
      allowed_payment_method_ids: [6, 7],
    }, asAliceLive(f));
    assert.equal(simple.status, 400);
    const simpleMessage =
      "no rail is configured in live for the allowed methods venmo (6), paypal (7): only ach (1) can be paid";
    assert.deepEqual(await simple.json(), {
      name: "VALIDATION_ERROR",
      message: simpleMessage,
      details: [{ Issue: simpleMessage, Field: "allowed_payment_method_ids", Location: "body" }],
    });

    const payeeCreated = await v1Live(f, "POST", "/v1/payees", {
      id: "pat",
      name: "Pat Doe",
      email: "pat@example.test",
      contact_channel: "email",
    });
    assert.equal(payeeCreated.status, 201);
    const v1 = await v1Live(f, "POST", "/v1/disbursements", {
      amount: 75,
      claim_id: "CLM-1",
      payee: { id: "pat" },
      modalities: ["check", "venmo"],
    });
    assert.equal(v1.status, 400);
    const v1Message =
      "no rail is configured in live for the allowed methods check (2), venmo (6): only ach (1) can be paid";
    assert.deepEqual(await v1.json(), {
      type: "/docs/errors#rail_not_configured",
      title: "Bad Request",
      status: 400,
      detail: v1Message,
      code: "rail_not_configured",
      errors: [{ param: "modalities", message: v1Message }],
    });
    // With ACH among them the create goes on to the money check (live has no funds here).
    const withAch = await v1Live(f, "POST", "/v1/disbursements", {
      amount: 75,
      claim_id: "CLM-2",
      payee: { id: "pat" },
      modalities: ["ach", "check"],
    });
    assert.equal(withAch.status, 409);
    assert.equal((await withAch.json() as { code: string }).code, "insufficient_funds");
    assert.equal(await liveCount(f, "payouts"), 0);
  });
});

Deno.test("test environment: every method stays payable and offered, with no bank settings or list", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "D-TEST",
      large_disbursement: false,
      payees: [payee("P-1", 100, { allowed_payment_method_ids: [2, 6, 7] })],
    });
    assert.equal(created.status, 201);
    const { rows } = await f.deps.databases.test.readClient.execute("SELECT id FROM payouts");
    const link = { payoutId: String(rows[0].id), companyId: f.cast.acme.id } as PortalLink;
    const shown = await portalPayout(f.deps.databases.test, link, f.deps.config.checkMicrFont);
    assert.deepEqual(shown.allowedPaymentMethodIds, [2, 6, 7]);
  });
});

Deno.test("POST /api/funds in live: an ACH funding without bank settings is a 400 naming payment_method; nothing is written", async () => {
  await withHttpFixture(async (f) => {
    const res = await api(f, "POST", "/api/funds", {
      payment_method: "ACH",
      amount: 2500,
      description: "top-up",
      large_disbursement: false,
    }, asAliceLive(f));
    assert.equal(res.status, 400);
    const message =
      `company ${f.cast.acme.id} has no bank settings in live, so no ACH debit can be sent; fund by wire, or have an operator set them (deno task admin bank:set)`;
    assert.deepEqual(await res.json(), {
      name: "VALIDATION_ERROR",
      message,
      details: [{ Issue: message, Field: "payment_method", Location: "body" }],
    });
    assert.equal(await liveCount(f, "fundings"), 0);
  });
});
