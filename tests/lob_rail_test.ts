/**
 * Checks mailed by Lob, against a local server written from Lob's published API
 * (tests/lob_contract_server.ts): the client's create, idempotency answer, refusal, timeout and
 * lookup; the check rail handing a print file to Lob (the register's numbers, the check account's
 * Lob bank account, the postage mapped, one check per register check even after a crash);
 * tracking from verified webhooks (kept once, a replay records nothing, a forged one is refused
 * and writes nothing) and from polling; returned to sender failing the payout
 * `returned_undeliverable` and offering it again; canceled before mailing voided in the register;
 * a postage Lob cannot mail refused at create; a check we void canceled at Lob (before its send
 * date: the payout offered again once the void reached the bank; after it: a normal void that
 * waits for paid items; an unanswered cancel asked again; a replay changes nothing); a check Lob
 * refuses for its address voided alone while the rest of its file is mailed.
 */
import assert from "node:assert/strict";
import { type LobCheckRequest, LobClient } from "../lib/lob/client.ts";
import { LOB_TRACK_JOB } from "../lib/lob/mailer.ts";
import { receiveLobWebhook } from "../lib/lob/service.ts";
import { LOB_CANCEL_JOB } from "../lib/lob/cancel_plan.ts";
import { voidAwaitingPaidItems, voidCheckAudited } from "../lib/checks/voids.ts";
import { scheduleJob } from "../db/scheduler_store.ts";
import type { AuditActor } from "../lib/audit/store.ts";
import { checkLobSettings, type LobSettings } from "../lib/lob/settings.ts";
import { lobSettingsStore } from "../lib/lob/store.ts";
import { lobPostageOf } from "../lib/lob/rules.ts";
import { jobHandlersOf } from "../lib/payouts/runtime.ts";
import { resolveBatch } from "../lib/rails/batches_service.ts";
import { receiveWire } from "../lib/funding/store.ts";
import type { Environment } from "../lib/platform/config.ts";
import {
  LOB_BANK_ACCOUNT,
  LOB_FROM_ADDRESS,
  LOB_LIVE_KEY,
  LOB_TEST_KEY,
  LOB_WEBHOOK_SECRET,
  type LobContractServer,
  startLobContractServer,
} from "./lob_contract_server.ts";
import {
  MONEY_SETTINGS,
  moneyBatchDeps,
  type MoneyFixture,
  openMoneyFixture,
} from "./money_core_helpers.ts";
import {
  chooseCheck,
  loadEmptySanctionsList,
  POSTAL_CHECK,
  registerOf,
  rows,
  storeCheckSettings,
} from "./checks_helpers.ts";
import { testSecretBox } from "./helpers.ts";
import { api, payee } from "./api_helpers.ts";
import { fundAcmeAuto, withHttpFixture } from "./http_fixture.ts";
import { offeredPayee, PortalBrowser, verify } from "./portal_helpers.ts";

const DAY_S = 86_400;

function settingsFor(server: LobContractServer, environment: Environment): LobSettings {
  const checked = checkLobSettings({
    api_key: environment === "live" ? LOB_LIVE_KEY : LOB_TEST_KEY,
    base_url: server.baseUrl,
    webhook_secret: LOB_WEBHOOK_SECRET,
    bank_account: LOB_BANK_ACCOUNT,
    from_address: LOB_FROM_ADDRESS,
  }, environment);
  if (!checked.ok) throw new Error(checked.message);
  return checked.value;
}

const request = (overrides: Partial<LobCheckRequest> = {}): LobCheckRequest => ({
  checkId: "chk_register_1",
  payoutId: "po_1",
  companyId: "co_1",
  checkNumber: 5001,
  amountCents: 12_345,
  memo: "CLM-1",
  payeeName: "Sam Payee",
  address: { line1: "1 Main St", line2: null, city: "Austin", state: "TX", zip: "73301" },
  postage: { mailType: "usps_first_class", extraService: null },
  ...overrides,
});

Deno.test("Lob client against the contract server: create, the idempotency answer, a refusal, no answer, a lookup by metadata", async () => {
  const server = startLobContractServer();
  try {
    const client = new LobClient(settingsFor(server, "test"), 300);
    const created = await client.createCheck(request(), "chk_register_1");
    assert.equal(created.kind, "created");
    const again = await client.createCheck(request(), "chk_register_1");
    assert.deepEqual(again, created, "the same key answers the same check");
    assert.equal(server.checks.size, 1);
    const sent = server.creates[0].body;
    assert.deepEqual(
      [
        sent.amount,
        sent.check_number,
        sent.mail_type,
        sent.extra_service,
        sent.bank_account,
        sent.from,
        sent.metadata,
      ],
      [123.45, 5001, "usps_first_class", undefined, LOB_BANK_ACCOUNT, LOB_FROM_ADDRESS, {
        check_id: "chk_register_1",
        payout_id: "po_1",
        company_id: "co_1",
      }],
    );
    const certified = await client.createCheck(
      request({
        checkId: "chk_register_2",
        postage: { mailType: "usps_first_class", extraService: "certified_return_receipt" },
      }),
      "chk_register_2",
    );
    assert.equal(certified.kind, "created");
    assert.equal(server.creates.at(-1)!.body.extra_service, "certified_return_receipt");

    const refused = await client.createCheck(
      request({ checkId: "chk_register_3", address: { ...request().address, state: "Texas" } }),
      "chk_register_3",
    );
    assert.deepEqual(refused, {
      kind: "refused",
      status: 422,
      code: "invalid",
      message: "to.address_state must be a state code",
    });

    server.failNext(500);
    await assert.rejects(client.createCheck(request({ checkId: "x" }), "x"), /Lob answered 500/);
    server.failNext("stall");
    await assert.rejects(client.findCheck("chk_register_1"), /timed out|abort/i);

    const found = await client.findCheck("chk_register_1");
    assert.equal(found?.id, created.kind === "created" ? created.check.id : "");
    assert.equal(await client.findCheck("chk_unknown"), null);
  } finally {
    await server.close();
  }
});

Deno.test("postage codes: FC and PRS are mailed, the others are refused naming the code", () => {
  assert.deepEqual(lobPostageOf("FC"), {
    ok: true,
    value: { mailType: "usps_first_class", extraService: null },
  });
  const priority = lobPostageOf("PR");
  assert.equal(priority.ok, false);
  assert.equal(
    !priority.ok && priority.message,
    "check_postage_type PR: Lob mails checks First-Class only, not Priority Mail; this company's checks are mailed by Lob, which takes FC or PRS",
  );
  for (const code of ["SC", "FSO", "USPSIDAY"]) assert.equal(lobPostageOf(code).ok, false, code);
});

/** A funded money fixture paying checks, whose Lob settings say Lob mails them. */
async function withLobFixture(
  environment: Environment,
  fn: (m: MoneyFixture, server: LobContractServer) => Promise<void>,
): Promise<void> {
  const server = startLobContractServer(environment === "live" ? LOB_LIVE_KEY : LOB_TEST_KEY);
  const m = await openMoneyFixture({
    environment,
    handlers: (database) =>
      jobHandlersOf(
        environment,
        { ...MONEY_SETTINGS, rails: { lobTimeoutMs: 500 } },
        database,
        testSecretBox,
      ),
  });
  try {
    if (environment === "live") {
      await storeCheckSettings(m, "live");
      await loadEmptySanctionsList(m);
    }
    await m.database.writer.write((tx) =>
      lobSettingsStore.save(
        tx,
        testSecretBox,
        m.companyId,
        settingsFor(server, environment),
        null,
        m.now(),
      )
    );
    const funding = await m.fund(10_000_000);
    if (environment === "live") {
      await m.database.writer.write((tx) => receiveWire(tx, funding, m.now()));
    }
    await fn(m, server);
  } finally {
    await m.close();
    await server.close();
  }
}

const lobChecksOf = (server: LobContractServer) =>
  [...server.checks.values()].map((check) => ({
    number: check.body.check_number,
    amount: check.body.amount,
    checkId: (check.body.metadata as Record<string, string>).check_id,
  }));

Deno.test("in test, a company whose checks Lob mails: the print file goes to Lob with the register's numbers, and the sandbox bank pays them", async () => {
  await withLobFixture("test", async (m, server) => {
    const [first, second] = await chooseCheck(m, [25_000, 7_550]);
    const register = await registerOf(m);
    assert.deepEqual(register.map((c) => [c.status, c.postage_code]), [["issued", "FC"], [
      "issued",
      "FC",
    ]]);
    const ids = await rows(m, "SELECT id, check_number FROM checks ORDER BY check_number");
    assert.deepEqual(lobChecksOf(server), [
      { number: register[0].check_number, amount: 250, checkId: ids[0].id },
      { number: register[1].check_number, amount: 75.5, checkId: ids[1].id },
    ]);
    const [print] = await rows(
      m,
      "SELECT b.status, b.rail_reference FROM rail_batches b WHERE b.rail = 'check_print'",
    );
    assert.deepEqual(print, { status: "transmitted", rail_reference: print.rail_reference });
    const tracking = await rows(
      m,
      "SELECT subject_id FROM scheduled_jobs WHERE kind = ? ORDER BY subject_id",
      LOB_TRACK_JOB,
    );
    assert.equal(tracking.length, 2, "each mailed check is polled");

    await m.advance(6 * DAY_S);
    assert.deepEqual(
      [(await m.payout(first)).status, (await m.payout(second)).status],
      ["completed", "completed"],
    );
    assert.equal(server.checks.size, 2, "no check was mailed twice");
  });
});

Deno.test("the sandbox keeps its outcomes through the same adapter: a check Lob mails to the undeliverable ZIP is returned, its payout fails returned_undeliverable and is offered again", async () => {
  await withLobFixture("test", async (m, server) => {
    const [payout] = await chooseCheck(m, [10_000], { details: { zip: "00000" } });
    assert.equal(server.checks.size, 1, "Lob mailed it");
    await m.advance(6 * DAY_S);
    const returned = await m.payout(payout);
    assert.deepEqual(
      [returned.status, returned.failure_reason],
      ["modality_offered", "returned_undeliverable"],
    );
  });
});

Deno.test("duplicate submission after a crash: Lob made the check but its answer was lost; the file goes in doubt, and sent again it finds the check by its metadata instead of mailing a second", async () => {
  await withLobFixture("test", async (m, server) => {
    server.loseNextCreateAnswer();
    const [payout] = await chooseCheck(m, [10_000]);
    // The transmission's retry finds the upload unanswered.
    await m.advance(10);
    const [print] = await rows(m, "SELECT id, status FROM rail_batches WHERE rail = 'check_print'");
    assert.equal(print.status, "in_doubt", "nobody knows whether Lob took it");
    assert.equal(server.checks.size, 1, "Lob made the check");
    const creates = server.creates.length;
    const resolved = await resolveBatch(
      moneyBatchDeps(m.database, "test"),
      { operator: { id: "op_admin", email: "admin@example.test" }, origin: "cli" },
      String(print.id),
      "not_received",
      m.now(),
    );
    assert.equal(resolved.ok, true, JSON.stringify(resolved));
    await m.settle();
    const [after] = await rows(m, "SELECT status FROM rail_batches WHERE id = ?", String(print.id));
    assert.equal(after.status, "transmitted");
    assert.equal(server.checks.size, 1, "one check at Lob");
    assert.equal(server.creates.length, creates, "no second create: it was found by its metadata");
    await m.advance(6 * DAY_S);
    assert.equal((await m.payout(payout)).status, "completed");
  });
});

Deno.test("tracking from Lob's webhooks: kept once and on the timeline; a replay records nothing; a forged one writes nothing; returned to sender fails the payout and offers it again", async () => {
  await withLobFixture("test", async (m, server) => {
    const [payout] = await chooseCheck(m, [10_000]);
    const [lobCheck] = [...server.checks.values()];
    const deps = { database: m.database, secretBox: testSecretBox };
    const deliver = (hook: { headers: Record<string, string>; body: string }) =>
      receiveLobWebhook(deps, {
        companyId: m.companyId,
        headers: {
          signature: hook.headers["Lob-Signature"],
          timestamp: hook.headers["Lob-Signature-Timestamp"],
        },
        body: hook.body,
      }, m.now());
    const events = () => rows(m, "SELECT id, type FROM check_mail_events ORDER BY at, id");

    const inTransit = server.webhook("check.in_transit", lobCheck.id, { signedAt: m.now() });
    assert.deepEqual(await deliver(inTransit), {
      ok: true,
      value: { eventId: `evt_check_in_transit_${lobCheck.id}` },
    });
    assert.deepEqual(await deliver(inTransit), {
      ok: true,
      value: { eventId: `evt_check_in_transit_${lobCheck.id}` },
    });
    assert.deepEqual(
      (await events()).map((e) => e.type),
      ["check.in_transit"],
      "the replay recorded nothing",
    );

    const forged = server.webhook("check.returned_to_sender", lobCheck.id, {
      secret: "not-the-secret-000000",
    });
    const refused = await deliver(forged);
    assert.equal(refused.ok, false);
    assert.equal(!refused.ok && refused.code, "webhook_not_verified");
    assert.equal((await events()).length, 1, "nothing written");
    assert.deepEqual((await registerOf(m)).map((c) => c.status), ["issued"]);

    assert.equal(
      (await deliver(
        server.webhook("check.returned_to_sender", lobCheck.id, { signedAt: m.now() }),
      )).ok,
      true,
    );
    const [voided] = await rows(m, "SELECT status, void_reason FROM checks");
    assert.deepEqual(voided, { status: "voided", void_reason: "returned_undeliverable" });
    // The void reaches the bank in the next positive-pay file; then the payout fails and is re-offered.
    await m.advance(60);
    const failed = await m.payout(payout);
    assert.equal(failed.failure_reason, "returned_undeliverable");
    assert.equal(failed.status, "modality_offered", "offered again");
    assert.deepEqual((await m.events(payout)).slice(-2), ["failed", "offered"]);
  });
});

Deno.test("polling finds what no webhook told: tracking events, and a check canceled at Lob before mailing is voided in the register", async () => {
  await withLobFixture("test", async (m, server) => {
    const [, canceled] = await chooseCheck(m, [10_000, 20_000]);
    const [one, two] = [...server.checks.values()];
    server.track(one.id, "In Transit", m.now());
    server.track(one.id, "In Local Area", m.now() + 1000);
    two.deleted = true;
    // The sandbox bank pays after five days: poll within them.
    await m.advance(DAY_S);
    const events = await rows(
      m,
      "SELECT lob_check_id, type FROM check_mail_events ORDER BY lob_check_id, type",
    );
    assert.deepEqual(events, [
      { lob_check_id: one.id, type: "check.in_local_area" },
      { lob_check_id: one.id, type: "check.in_transit" },
      { lob_check_id: two.id, type: "check.deleted" },
    ]);
    assert.deepEqual(
      await rows(m, "SELECT status, void_reason FROM checks ORDER BY check_number"),
      [
        { status: "issued", void_reason: null },
        { status: "voided", void_reason: "canceled at the mail provider before mailing" },
      ],
    );
    // No paper existed: once the void reached the bank the payout fails and is offered again.
    await m.advance(60);
    const offered = await m.payout(canceled);
    assert.deepEqual([offered.status, offered.failure_reason], [
      "modality_offered",
      "check_voided",
    ]);
  });
});

Deno.test("HTTP: Lob's webhook route answers 404 without settings, 400 for a forged signature (nothing written), 200 for a verified event; a postage Lob cannot mail is refused at create", async () => {
  await withHttpFixture(async (f) => {
    const acme = f.cast.acme;
    const lob = startLobContractServer();
    try {
      const client = new LobClient(settingsFor(lob, "test"));
      const made = await client.createCheck(request(), "chk_register_1");
      assert.equal(made.kind, "created");
      const lobCheckId = made.kind === "created" ? made.check.id : "";
      const post = (path: string, hook: { headers: Record<string, string>; body: string }) =>
        f.app.request(path, { method: "POST", headers: hook.headers, body: hook.body });
      const path = `/rails/lob/${acme.id}/test/webhook`;
      const hook = lob.webhook("check.in_transit", lobCheckId, { signedAt: f.clock.now() });
      const missing = await post(path, hook);
      assert.equal(missing.status, 404);
      assert.equal((await missing.json()).error.code, "lob_not_configured");

      await f.deps.databases.test.writer.write((tx) =>
        lobSettingsStore.save(
          tx,
          testSecretBox,
          acme.id,
          settingsFor(lob, "test"),
          null,
          f.clock.now(),
        )
      );
      const forged = await post(
        path,
        lob.webhook("check.in_transit", lobCheckId, {
          secret: "x".repeat(20),
          signedAt: f.clock.now(),
        }),
      );
      assert.equal(forged.status, 400);
      assert.equal((await forged.json()).error.code, "webhook_not_verified");
      const verified = await post(path, hook);
      assert.equal(verified.status, 200);
      assert.deepEqual(await verified.json(), {
        received: true,
        event_id: `evt_check_in_transit_${lobCheckId}`,
      });
      const kept = await f.deps.databases.test.readClient.execute(
        "SELECT count(*) AS n FROM check_mail_events",
      );
      assert.equal(
        Number(kept.rows[0].n),
        0,
        "a check not in our register is acknowledged, not kept",
      );

      await fundAcmeAuto(f, 1_000_000);
      const refused = await api(f, "POST", "/api/disbursements", {
        disbursement_uuid: "CLM-LOB",
        large_disbursement: false,
        payees: [payee("p", 10, { payment_method_settings: { check_postage_type: "PR" } })],
      });
      assert.equal(refused.status, 400);
      const body = await refused.json();
      assert.match(JSON.stringify(body), /postage_not_mailable|Lob mails checks First-Class only/);
      const accepted = await api(f, "POST", "/api/disbursements", {
        disbursement_uuid: "CLM-LOB-2",
        large_disbursement: false,
        payees: [payee("p", 10, { payment_method_settings: { check_postage_type: "PRS" } })],
      });
      assert.equal(accepted.status, 201, JSON.stringify(await accepted.clone().json()));
    } finally {
      await lob.close();
    }
  });
});

Deno.test("portal: a payee of a company whose checks Lob mails is offered FC and PRS only, and a Priority pick is refused", async () => {
  await withHttpFixture(async (f) => {
    const lob = startLobContractServer();
    try {
      await f.deps.databases.test.writer.write((tx) =>
        lobSettingsStore.save(
          tx,
          testSecretBox,
          f.cast.acme.id,
          settingsFor(lob, "test"),
          null,
          f.clock.now(),
        )
      );
      const { email, linkPath } = await offeredPayee(f, "pat", { allowed_payment_method_ids: [2] });
      const browser = new PortalBrowser(f);
      await verify(browser, linkPath, email);
      await browser.get(`${linkPath}/method?method=check`);
      const offered = [...browser.lastHtml.matchAll(/id="postage-([A-Z]+)"/g)].map((m) => m[1]);
      assert.deepEqual(offered, ["FC", "PRS"]);
      const form = {
        method: "check",
        address_one: "1 Main St",
        city: "Austin",
        state: "TX",
        zip_code: "73301",
      };
      const refused = await browser.post(`${linkPath}/method`, { ...form, postage: "PR" });
      assert.equal(refused.status, 422);
      assert.match(browser.lastHtml, /Choose a delivery speed from the list\./);
      const chosen = await browser.post(`${linkPath}/method`, { ...form, postage: "PRS" });
      assert.equal(chosen.status, 303, browser.lastHtml);
    } finally {
      await lob.close();
    }
  }, { SANDBOX_INBOX: "1" });
});

const ops: AuditActor = { operator: { id: "op_admin", email: "admin@ops.test" }, origin: "cli" };

/** An operator voids the check of number `checkNumber`, as `checks:void` does. */
async function operatorVoid(m: MoneyFixture, checkNumber: number): Promise<void> {
  const voided = await m.database.writer.write((tx) =>
    voidCheckAudited(tx, "test", ops, {
      companyId: m.companyId,
      checkNumber,
      reason: "payee asked for another method",
      voidedBy: "admin@ops.test",
    }, m.now())
  );
  assert.ok(voided.ok, voided.ok ? "" : voided.message);
}

const mailEventsOf = (m: MoneyFixture) =>
  rows(m, "SELECT id, type FROM check_mail_events ORDER BY at, id");

Deno.test("a check we void before Lob mails it is canceled at Lob; the void is one the bank could never pay, so the payout fails check_voided and is offered again once the void reached the bank", async () => {
  await withLobFixture("test", async (m, server) => {
    const [payout] = await chooseCheck(m, [10_000]);
    const [lobCheck] = [...server.checks.values()];
    const [{ check_number: number }] = await registerOf(m);
    assert.equal((await m.payout(payout)).status, "funds_sent");
    const before = await m.balances();

    await operatorVoid(m, Number(number));
    await m.advance(60);
    assert.deepEqual(server.cancels, [{ lobCheckId: lobCheck.id, status: 200 }]);
    assert.equal(lobCheck.deleted, true);
    assert.deepEqual(await mailEventsOf(m), [
      { id: `${lobCheck.id}:deleted`, type: "check.deleted" },
    ]);
    assert.deepEqual(
      await rows(m, "SELECT status, void_reason, void_file_id IS NOT NULL AS told FROM checks"),
      [{ status: "voided", void_reason: "payee asked for another method", told: 1 }],
    );
    const offered = await m.payout(payout);
    assert.deepEqual([offered.status, offered.failure_reason], [
      "modality_offered",
      "check_voided",
    ]);
    assert.deepEqual((await m.events(payout)).slice(-2), ["failed", "offered"]);
    const after = await m.balances();
    assert.equal(after.in_transit, before.in_transit - 10_000, "the money left in_transit");

    // Replay: the job again (and Lob's own word of it) cancels nothing twice and writes nothing.
    const events = await m.events(payout);
    const [{ id: checkId }] = await rows(m, "SELECT id FROM checks");
    await m.database.writer.write((tx) =>
      scheduleJob(tx, {
        companyId: m.companyId,
        kind: LOB_CANCEL_JOB,
        subjectId: String(checkId),
        dueAt: m.now(),
      }, m.now())
    );
    await m.settle();
    assert.equal(server.cancels.length, 1, "no second DELETE: Lob's check was read first");
    assert.equal((await mailEventsOf(m)).length, 1);
    assert.deepEqual(await m.events(payout), events);
    assert.deepEqual(await m.balances(), after);
  });
});

Deno.test("too late to cancel: Lob refuses the cancel past the send date; the void stays a normal void protected by positive pay and the payout waits for the bank's paid items", async () => {
  await withLobFixture("test", async (m, server) => {
    const [payout] = await chooseCheck(m, [10_000]);
    const [lobCheck] = [...server.checks.values()];
    server.passSendDate(lobCheck.id);
    const [{ check_number: number }] = await registerOf(m);

    await operatorVoid(m, Number(number));
    await m.advance(60);
    assert.deepEqual(server.cancels, [{ lobCheckId: lobCheck.id, status: 422 }]);
    assert.equal(lobCheck.deleted, false, "Lob mails it");
    assert.deepEqual(await mailEventsOf(m), [
      { id: `${lobCheck.id}:cancel_refused`, type: "check.cancel_refused" },
    ]);
    const [check] = await rows(
      m,
      "SELECT status, reference, void_file_id IS NOT NULL AS told FROM checks",
    );
    assert.deepEqual([check.status, check.told], ["voided", 1], "listed void to the bank");
    const waiting = await m.payout(payout);
    assert.deepEqual([waiting.status, waiting.failure_reason], ["funds_sent", null]);
    const awaiting = await voidAwaitingPaidItems(m.database.readClient, String(check.reference));
    assert.equal(awaiting?.checkNumber, Number(number), "it waits for the bank's paid items");
  });
});

Deno.test("a cancel whose answer Lob never gave is asked again: the retry reads the check at Lob, finds it canceled and sends no second DELETE; the void, told to the bank meanwhile, then fails the payout at once", async () => {
  await withLobFixture("test", async (m, server) => {
    const [payout] = await chooseCheck(m, [10_000]);
    const [lobCheck] = [...server.checks.values()];
    const [{ check_number: number }] = await registerOf(m);
    server.loseNextCancelAnswer();
    await operatorVoid(m, Number(number));
    await m.settle();
    const [job] = await rows(
      m,
      "SELECT attempts, done_at FROM scheduled_jobs WHERE kind = ?",
      LOB_CANCEL_JOB,
    );
    assert.deepEqual(job, { attempts: 1, done_at: null }, "no answer: asked again later");
    assert.equal(lobCheck.deleted, true, "Lob did cancel it");
    assert.equal((await mailEventsOf(m)).length, 0, "nothing recorded without an answer");
    const [{ told }] = await rows(m, "SELECT void_file_id IS NOT NULL AS told FROM checks");
    assert.equal(told, 1, "the void reached the bank meanwhile");
    assert.equal((await m.payout(payout)).status, "funds_sent", "it waits: paper may exist");

    await m.advance(600);
    assert.equal(server.cancels.length, 1, "one DELETE");
    assert.deepEqual((await mailEventsOf(m)).map((e) => e.type), ["check.deleted"]);
    const offered = await m.payout(payout);
    assert.deepEqual([offered.status, offered.failure_reason], [
      "modality_offered",
      "check_voided",
    ]);
  });
});

Deno.test("a print file of three checks, one refused by Lob for its address: that check is voided in the register (never payable) and its payout fails address_not_mailable and is offered again; the other two are mailed", async () => {
  await withLobFixture("test", async (m, server) => {
    server.undeliverableZips.add("73399");
    const created = await m.create(
      [10_000, 20_000, 30_000].map((amountCents, i) => ({
        payeeUuid: `p${i}`,
        amountCents,
        allowedPaymentMethodIds: [POSTAL_CHECK],
      })),
    );
    assert.ok(created.ok);
    await m.settle();
    const ids = created.value.payouts.map((payout) => payout.id);
    const zips = ["73301", "73399", "73344"];
    for (const [i, id] of ids.entries()) {
      const selected = await m.select(id, POSTAL_CHECK, { zip: zips[i] });
      assert.ok(selected.ok, selected.ok ? "" : selected.message);
    }
    const before = await m.balances();
    await m.settle();
    const [first, refused, third] = ids;

    const register = await rows(
      m,
      `SELECT payout_id, status, void_reason, voided_by FROM checks ORDER BY check_number`,
    );
    assert.deepEqual(register, [
      { payout_id: first, status: "issued", void_reason: null, voided_by: null },
      {
        payout_id: refused,
        status: "voided",
        void_reason: "refused by the mail provider: The address you've provided is undeliverable",
        voided_by: "system",
      },
      { payout_id: third, status: "issued", void_reason: null, voided_by: null },
    ]);
    assert.deepEqual(lobChecksOf(server).map((c) => c.amount), [100, 300], "two mailed");
    const [print] = await rows(m, "SELECT status FROM rail_batches WHERE rail = 'check_print'");
    assert.deepEqual(print, { status: "transmitted" }, "the file went on with the others");
    assert.deepEqual(server.cancels, [], "nothing to cancel: Lob never made it");

    // The void reaches the bank in the next positive-pay file; no paper existed, so the payout
    // fails at once then.
    await m.advance(60);
    const [{ told }] = await rows(
      m,
      "SELECT void_file_id IS NOT NULL AS told FROM checks WHERE payout_id = ?",
      refused,
    );
    assert.equal(told, 1);
    const failed = await m.payout(refused);
    assert.deepEqual([failed.status, failed.failure_reason], [
      "modality_offered",
      "address_not_mailable",
    ]);
    assert.deepEqual((await m.events(refused)).slice(-2), ["failed", "offered"]);
    for (const id of [first, third]) {
      assert.equal((await m.payout(id)).status, "funds_sent");
      assert.notDeepEqual((await m.events(id)).slice(-1), ["failed"]);
    }
    const after = await m.balances();
    assert.equal(after.in_transit, before.in_transit + 40_000, "two checks in flight");
    assert.equal(after.available, before.available, "the offered payout still holds its money");
  });
});
