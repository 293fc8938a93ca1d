/**
 * PayPal settings, operator commands and the webhook endpoint (issue 19): paypal:set refuses bad
 * settings naming the field and writes nothing; in test it saves at once, in live a second admin
 * approves; paypal:show masks; paypal:cancel-unclaimed is audited; the webhook endpoint refuses a
 * post PayPal does not verify (400, nothing written), an unknown configuration (404) and a body that
 * is not an event (400 naming the field), and records a verified notice once.
 */
import assert from "node:assert/strict";
import { runDueJobs } from "../db/scheduler.ts";
import { selectMethod } from "../lib/payouts/jobs.ts";
import { PAYPAL_LIVE_BASE_URL, PAYPAL_SANDBOX_BASE_URL } from "../lib/paypal/settings.ts";
import { createApp } from "../routes/app.ts";
import { api, payee } from "./api_helpers.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";
import { PaypalContractServer } from "./paypal_contract_server.ts";

async function withServerAndApp(
  fn: (
    f: HttpFixture,
    server: PaypalContractServer,
    call: ReturnType<typeof adminCall>,
    dir: string,
  ) => Promise<void>,
) {
  const server = await PaypalContractServer.start();
  const dir = await Deno.makeTempDir({ prefix: "paypal-settings-" });
  try {
    await withHttpFixture(async (f) => {
      const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
      const alice = await makeOperator(
        f.deps,
        { email: "alice@ops.test", role: "admin" },
        f.clock.now(),
      );
      await fn(f, server, adminCall(app, alice.token), dir);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
    await server.close();
  }
}

async function rowsOf(f: HttpFixture, environment: "test" | "live", sql: string) {
  const { rows } = await f.deps.databases[environment].readClient.execute(sql);
  return rows.map((row) => ({ ...row }));
}

Deno.test("paypal:set refuses bad settings naming the field and writes nothing; in test it saves at once, and paypal:show masks", async () => {
  await withServerAndApp(async (f, server, call, dir) => {
    const tin = f.cast.acme.tin;
    const good = server.settingsJson();
    const bad: [string, Record<string, unknown>, "test" | "live", string][] = [
      ["client_id", { ...good, client_id: undefined }, "test", "--file: client_id: "],
      ["client_secret", { ...good, client_secret: "has space" }, "test", "--file: client_secret: "],
      ["base_url", { ...good, base_url: "not a url" }, "test", "--file: base_url"],
      ["base_url", { ...good, base_url: `${server.baseUrl}/v1` }, "test", "--file: base_url"],
      ["base_url", { ...good, base_url: "http://paypal.example" }, "test", "--file: base_url"],
      ["base_url", { ...good, base_url: PAYPAL_LIVE_BASE_URL }, "test", "--file: base_url"],
      ["base_url", { ...good, base_url: PAYPAL_SANDBOX_BASE_URL }, "live", "--file: base_url"],
      ["webhook_id", { ...good, webhook_id: "" }, "test", "--file: webhook_id"],
      ["extra", { ...good, extra: 1 }, "live", "--file: extra"],
    ];
    for (const [field, settings, environment, start] of bad) {
      await Deno.writeTextFile(`${dir}/bad.json`, JSON.stringify(settings));
      const refused = await call("paypal:set", { tin, file: `${dir}/bad.json`, environment });
      assert.equal(refused.status, 400, `${field}: ${JSON.stringify(refused.body)}`);
      assert.equal(refused.body.error.code, "invalid_input");
      assert.ok(refused.body.error.message.startsWith(start), refused.body.error.message);
    }
    assert.match(
      (await call("paypal:set", { tin, file: `${dir}/none.json`, environment: "test" })).body
        .error.message,
      /no such file/,
    );
    await Deno.writeTextFile(`${dir}/broken.json`, "{");
    assert.match(
      (await call("paypal:set", { tin, file: `${dir}/broken.json`, environment: "test" })).body
        .error.message,
      /not JSON/,
    );
    for (const environment of ["test", "live"] as const) {
      assert.deepEqual(await rowsOf(f, environment, "SELECT * FROM paypal_settings"), []);
      assert.deepEqual(
        await rowsOf(f, environment, "SELECT * FROM audit_log WHERE action LIKE 'paypal:%'"),
        [],
      );
    }
    assert.deepEqual(await rowsOf(f, "live", "SELECT * FROM approvals"), []);
    const none = await call("paypal:show", { tin, environment: "live" });
    assert.equal(none.body.error.code, "paypal_settings_not_found");
    assert.match(none.body.error.message, /PayPal and Venmo are not offered/);

    await Deno.writeTextFile(`${dir}/good.json`, JSON.stringify(good));
    const saved = await call("paypal:set", { tin, file: `${dir}/good.json`, environment: "test" });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.deepEqual(saved.body.result.settings, {
      client_id: `…${server.clientId.slice(-4)}`,
      client_secret: "(sealed)",
      base_url: server.baseUrl,
      webhook_id: server.webhookId,
    });
    const shown = await call("paypal:show", { tin, environment: "test" });
    assert.equal(shown.body.result.fingerprint, saved.body.result.fingerprint);
    assert.ok(!JSON.stringify(shown.body).includes(server.clientSecret));
    const [stored] = await rowsOf(f, "test", "SELECT settings_sealed FROM paypal_settings");
    assert.ok(!String(stored.settings_sealed).includes(server.clientSecret), "sealed at rest");
    const audit = await rowsOf(
      f,
      "test",
      "SELECT operator_email, object_type FROM audit_log WHERE action = 'paypal:set'",
    );
    assert.deepEqual(audit, [{ operator_email: "alice@ops.test", object_type: "paypal_settings" }]);
    // Live is another configuration: PayPal is still not offered there.
    assert.equal((await call("paypal:show", { tin, environment: "live" })).status, 404);
  });
});

Deno.test("the webhook endpoint: unknown configuration 404, a body that is no event 400 naming the field, an unverified post 400 with nothing written, a verified one recorded once; the job acts on PayPal's answer, not the body; paypal:cancel-unclaimed is audited", async () => {
  await withServerAndApp(async (f, server, call, dir) => {
    const acme = f.cast.acme;
    const test = f.deps.databases.test;
    await Deno.writeTextFile(`${dir}/good.json`, JSON.stringify(server.settingsJson()));
    assert.equal(
      (await call("paypal:set", { tin: acme.tin, file: `${dir}/good.json`, environment: "test" }))
        .status,
      200,
    );
    await fundAcmeAuto(f, 100_000);
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "D-PP-1",
      large_disbursement: false,
      line: "auto",
      payees: [payee("P-PP", 40, { allowed_payment_method_ids: [7] })],
    });
    assert.equal(created.status, 201, await created.clone().text());
    const run = () =>
      runDueJobs(test, acme.id, f.clock.now(), f.deps.jobHandlers.test, { clock: f.clock });
    await run();
    const { rows } = await test.readClient.execute(
      "SELECT id FROM payouts WHERE payee_uuid = 'P-PP'",
    );
    const payoutId = String(rows[0].id);
    const selected = await test.writer.write((tx) =>
      selectMethod(tx, payoutId, {
        paymentMethodId: 7,
        details: {},
        kept: { email: "pp@payee.test" },
      }, f.clock.now())
    );
    assert.ok(selected.ok);
    await run();
    const reference = `${payoutId}-1`;
    assert.equal(server.paymentsOf(reference), 1);
    const item = server.setItemState(reference, "UNCLAIMED", "RECEIVER_UNREGISTERED");

    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      f.app.request(path, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...headers },
        body,
      });
    const signed = server.signedItemWebhook("PAYMENT.PAYOUTS-ITEM.UNCLAIMED", item);
    const hook = `/rails/paypal/${acme.id}/test/webhook`;
    const unknown = await post(
      `/rails/paypal/${f.cast.beacon.id}/test/webhook`,
      JSON.stringify(signed.body),
      signed.headers,
    );
    assert.deepEqual([unknown.status, (await unknown.json()).error.code], [
      404,
      "paypal_not_configured",
    ]);
    const liveUnknown = await post(
      `/rails/paypal/${acme.id}/live/webhook`,
      JSON.stringify(signed.body),
      signed.headers,
    );
    assert.equal(liveUnknown.status, 404, "live is another configuration");
    const notEvent = await post(
      hook,
      JSON.stringify({ id: "WH-1", event_type: "X" }),
      signed.headers,
    );
    const notEventBody = await notEvent.json();
    assert.deepEqual([notEvent.status, notEventBody.error.code], [400, "invalid_input"]);
    assert.match(notEventBody.error.message, /^resource: /);
    const unsigned = await post(hook, JSON.stringify(signed.body));
    assert.deepEqual([unsigned.status, (await unsigned.json()).error.code], [
      400,
      "webhook_not_verified",
    ]);
    const otherEvent = server.signedItemWebhook("PAYMENT.PAYOUTS-ITEM.UNCLAIMED", item);
    const swapped = await post(hook, JSON.stringify(signed.body), otherEvent.headers);
    assert.equal(swapped.status, 400, "a signature of another event");
    assert.deepEqual(await rowsOf(f, "test", "SELECT * FROM paypal_notices"), []);

    for (let i = 0; i < 2; i++) {
      const verified = await post(hook, JSON.stringify(signed.body), signed.headers);
      assert.equal(verified.status, 200, await verified.clone().text());
    }
    assert.deepEqual(await rowsOf(f, "test", "SELECT count(*) AS n FROM paypal_notices"), [{
      n: 1,
    }]);
    await run();
    // The body said SUCCESS; PayPal says UNCLAIMED, and PayPal is what counts.
    const statusOf = async () =>
      (await rowsOf(
        f,
        "test",
        `SELECT status, failure_reason FROM payouts WHERE id = '${payoutId}'`,
      ))[0];
    assert.deepEqual(await statusOf(), { status: "funds_sent", failure_reason: null });
    assert.deepEqual(await rowsOf(f, "test", "SELECT transaction_status FROM paypal_items"), [
      { transaction_status: "UNCLAIMED" },
    ]);

    // A clerk has PayPal cancel the unclaimed item: audited, the payout re-offered.
    const clerk = await makeOperator(
      f.deps,
      { email: "clerk@ops.test", role: "clerk" },
      f.clock.now(),
    );
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const canceled = await adminCall(app, clerk.token)("paypal:cancel-unclaimed", {
      payout: payoutId,
      environment: "test",
    });
    assert.equal(canceled.status, 200, JSON.stringify(canceled.body));
    assert.deepEqual(canceled.body.result, {
      environment: "test",
      payout_id: payoutId,
      payout_item_id: item.payout_item_id,
      status: "modality_offered",
      failure_reason: "unclaimed_canceled",
    });
    const again = await adminCall(app, clerk.token)("paypal:cancel-unclaimed", {
      payout: payoutId,
      environment: "test",
    });
    assert.equal(again.body.error.code, "paypal_item_not_found");
    const audit = await rowsOf(
      f,
      "test",
      "SELECT operator_email, object_id, before, after FROM audit_log WHERE action = 'paypal:cancel-unclaimed'",
    );
    assert.equal(audit.length, 1);
    assert.equal(audit[0].operator_email, "clerk@ops.test");
    assert.equal(JSON.parse(String(audit[0].before))[0].transaction_status, "UNCLAIMED");
    assert.equal(JSON.parse(String(audit[0].after))[0].status, "modality_offered");
  });
});
