/**
 * The console's operations pages that change something (issue 20): Webhooks (replay one delivery,
 * or an endpoint's failed deliveries since a time), Jobs and notifications (retry), Sandbox
 * (advance a clock). Each checked for its roles (a viewer is shown no button and refused 403 with
 * nothing written), company scope (another company's object is a 404, even by id), CSRF, and the
 * audit row of each change.
 */
import assert from "node:assert/strict";
import { withHttpFixture } from "./http_fixture.ts";
import { consoleAs, countRows, textOf } from "./console_helpers.ts";
import { seedConsoleData } from "./console_pages_helpers.ts";
import { createApp } from "../routes/app.ts";
import { ADMIN_TOKEN, adminCall, makeOperator } from "./operator_helpers.ts";

const auditRows = (action: string) =>
  `SELECT count(*) AS n FROM audit_log WHERE action = '${action}'`;

Deno.test("console webhooks: endpoints and the delivery log, scoped; a clerk replays a failed delivery, audited", async () => {
  await withHttpFixture(async (f) => {
    const data = await seedConsoleData(f);
    const { browser: clerk } = await consoleAs(f, { email: "cleo@ops.test", role: "clerk" });
    const list = await clerk.get("/console/webhooks?env=test");
    assert.equal(list.status, 200);
    assert.match(
      list.html,
      new RegExp(`href="/console/webhooks/${data.acme.endpointId}\\?env=test"`),
    );
    assert.match(list.html, new RegExp(`/console/webhooks/${data.beacon.endpointId}`));
    assert.match(
      textOf(list.html),
      /Acme Mutual line auto http:\/\/127\.0\.0\.1:9\/hook failing 1/,
    );

    const page = await clerk.get(`/console/webhooks/${data.acme.endpointId}?env=test`);
    assert.equal(page.status, 200);
    const text = textOf(page.html);
    assert.match(text, /failed 9 500 123 ms upstream exploded/);
    assert.match(
      page.html,
      new RegExp(`action="/console/webhooks/deliveries/${data.acme.deliveryId}/replay"`),
    );
    assert.ok(!page.html.includes(data.acme.webhookSecret), "no signing secret on the page");

    const replayed = await clerk.post(
      `/console/webhooks/deliveries/${data.acme.deliveryId}/replay`,
      {
        env: "test",
      },
    );
    assert.equal(replayed.status, 303);
    assert.equal(
      replayed.location,
      `/console/webhooks/${data.acme.endpointId}?done=replayed&env=test`,
    );
    assert.equal(
      await countRows(
        f,
        "test",
        "SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND manual = 1 AND status = 'pending' AND event_id = ?",
        [data.acme.endpointId, data.acme.eventId],
      ),
      1,
    );
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT operator_email, origin, object_type, object_id, company_id, before, after FROM audit_log WHERE action = 'webhooks:replay'",
    );
    assert.equal(rows.length, 1);
    assert.deepEqual({ ...rows[0] }, {
      operator_email: "cleo@ops.test",
      origin: "console 127.0.0.1",
      object_type: "webhook_delivery",
      object_id: data.acme.deliveryId,
      company_id: f.cast.acme.id,
      before: '[{"deliveries":1,"status":"failed"}]',
      after: '[{"deliveries":1,"status":"failed"},{"deliveries":1,"status":"pending"}]',
    });
    const after = await clerk.get(
      `/console/webhooks/${data.acme.endpointId}?env=test&done=replayed`,
    );
    assert.match(textOf(after.html), /The delivery was queued again/);
  });
});

Deno.test("console webhooks: replaying every failed delivery since a time, then again (nothing left), and a bad time kept in the form", async () => {
  await withHttpFixture(async (f) => {
    const data = await seedConsoleData(f);
    const { browser: clerk } = await consoleAs(f, { email: "cleo@ops.test", role: "clerk" });
    await clerk.get(`/console/webhooks/${data.acme.endpointId}?env=test`);
    const path = `/console/webhooks/${data.acme.endpointId}/replay-failed`;
    const bad = await clerk.post(path, { env: "test", since: "yesterday" });
    assert.equal(bad.status, 400);
    assert.match(bad.html, /Failed since: a date and time, in UTC/);
    assert.match(bad.html, /name="since" value="yesterday"/);
    assert.match(bad.html, /aria-invalid="true"/);
    const since = new Date(f.clock.now() - 3_600_000).toISOString().slice(0, 16);
    const all = await clerk.post(path, { env: "test", since });
    assert.equal(all.status, 303);
    assert.match(all.location!, /done=replayed_all/);
    const again = await clerk.post(path, { env: "test", since });
    assert.match(again.location!, /done=replayed_none/);
    assert.equal(
      await countRows(f, "test", "SELECT count(*) AS n FROM webhook_deliveries WHERE manual = 1"),
      1,
    );
    // Only the unit that queued a replay is audited: the second changed nothing.
    assert.equal(await countRows(f, "test", auditRows("webhooks:replay")), 1);
  });
});

Deno.test("console webhooks: a viewer sees no replay and is refused 403; another company's delivery is 404; no CSRF is 403; nothing written", async () => {
  await withHttpFixture(async (f) => {
    const data = await seedConsoleData(f);
    const { browser: viewer } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const page = await viewer.get(`/console/webhooks/${data.acme.endpointId}?env=test`);
    assert.equal(page.status, 200);
    assert.ok(!page.html.includes("/replay"), "no replay form for a viewer");
    const refused = await viewer.post(
      `/console/webhooks/deliveries/${data.acme.deliveryId}/replay`,
      {
        env: "test",
      },
    );
    assert.equal(refused.status, 403);
    assert.match(textOf(refused.html), /vic@ops\.test is a viewer: this needs the clerk role/);

    const { browser: scoped } = await consoleAs(f, {
      email: "sam@ops.test",
      role: "clerk",
      companies: f.cast.acme.tin,
    });
    const list = await scoped.get("/console/webhooks?env=test");
    assert.ok(!list.html.includes(data.beacon.endpointId), "Beacon's endpoint is not listed");
    assert.equal(
      (await scoped.get(`/console/webhooks/${data.beacon.endpointId}?env=test`)).status,
      404,
    );
    const other = await scoped.post(
      `/console/webhooks/deliveries/${data.beacon.deliveryId}/replay`,
      {
        env: "test",
      },
    );
    assert.equal(other.status, 404);
    const noCsrf = await scoped.post(
      `/console/webhooks/deliveries/${data.acme.deliveryId}/replay`,
      { env: "test" },
      { csrf: null },
    );
    assert.equal(noCsrf.status, 403);
    assert.equal(
      await countRows(f, "test", "SELECT count(*) AS n FROM webhook_deliveries WHERE manual = 1"),
      0,
    );
    assert.equal(await countRows(f, "test", auditRows("webhooks:replay")), 0);
  });
});

Deno.test("console jobs: parked jobs of the scope; a clerk retries one (audited), a viewer is refused 403", async () => {
  await withHttpFixture(async (f) => {
    const data = await seedConsoleData(f);
    const { browser: viewer } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const seen = await viewer.get("/console/jobs?env=test");
    assert.equal(seen.status, 200);
    assert.match(textOf(seen.html), /TypeError: cannot read the payout/);
    assert.ok(!seen.html.includes(`/console/jobs/${data.acme.jobId}/retry`));
    assert.equal(
      (await viewer.post(`/console/jobs/${data.acme.jobId}/retry`, { env: "test" })).status,
      403,
    );

    const { browser: clerk } = await consoleAs(f, {
      email: "sam@ops.test",
      role: "clerk",
      companies: f.cast.acme.tin,
    });
    const page = await clerk.get("/console/jobs?env=test");
    assert.ok(page.html.includes(`/console/jobs/${data.acme.jobId}/retry`));
    assert.ok(!page.html.includes(data.beacon.jobId), "Beacon's job is not listed");
    assert.ok(!page.html.includes("/console/jobs/retry-all"), "retry-all is for every company");
    assert.equal(
      (await clerk.post(`/console/jobs/${data.beacon.jobId}/retry`, { env: "test" })).status,
      404,
    );
    const retried = await clerk.post(`/console/jobs/${data.acme.jobId}/retry`, { env: "test" });
    assert.equal(retried.status, 303);
    assert.equal(retried.location, "/console/jobs?done=job_retried&env=test");
    assert.equal(
      await countRows(
        f,
        "test",
        "SELECT count(*) AS n FROM scheduled_jobs WHERE done_at IS NULL AND id = ?",
        [
          data.acme.jobId,
        ],
      ),
      1,
    );
    assert.equal(
      await countRows(
        f,
        "test",
        "SELECT count(*) AS n FROM scheduled_jobs WHERE done_at IS NOT NULL AND id = ?",
        [
          data.beacon.jobId,
        ],
      ),
      1,
    );
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT operator_email, object_id, company_id FROM audit_log WHERE action = 'jobs:retry'",
    );
    assert.deepEqual(rows.map((row) => ({ ...row })), [{
      operator_email: "sam@ops.test",
      object_id: data.acme.jobId,
      company_id: f.cast.acme.id,
    }]);
    const again = await clerk.post(`/console/jobs/${data.acme.jobId}/retry`, { env: "test" });
    assert.equal(again.status, 409);
    assert.match(textOf(again.html), /is not parked: it is pending/);
  });
});

Deno.test("console notifications: a clerk retries a failed live notification (audited in live); its body is never shown", async () => {
  await withHttpFixture(async (f) => {
    const data = await seedConsoleData(f);
    const { browser: clerk } = await consoleAs(f, { email: "cleo@ops.test", role: "clerk" });
    const page = await clerk.get("/console/jobs/notifications?env=live");
    assert.equal(page.status, 200);
    assert.match(
      textOf(page.html),
      /pat@example\.test Your payment is ready Acme Mutual 6 550 mailbox unavailable/,
    );
    assert.ok(!page.html.includes("secret link inside"), "a notification's body is not shown");
    const retried = await clerk.post(`/console/notifications/${data.notificationId}/retry`, {
      env: "live",
    });
    assert.equal(retried.status, 303);
    assert.equal(
      retried.location,
      "/console/jobs/notifications?done=notification_retried&env=live",
    );
    const { rows } = await f.deps.databases.live.readClient.execute({
      sql: "SELECT status, attempt_count, next_attempt_at FROM notifications WHERE id = ?",
      args: [data.notificationId],
    });
    assert.deepEqual({ ...rows[0] }, {
      status: "pending",
      attempt_count: 0,
      next_attempt_at: null,
    });
    assert.equal(await countRows(f, "live", auditRows("notifications:retry")), 1);
    const again = await clerk.post(`/console/notifications/${data.notificationId}/retry`, {
      env: "live",
    });
    assert.equal(again.status, 409);
    assert.match(textOf(again.html), /is pending, not failed/);
  });
});

Deno.test("console sandbox: clocks and inbox in test, 404 in live; a clerk advances a clock (audited), a viewer cannot", async () => {
  await withHttpFixture(async (f) => {
    await seedConsoleData(f);
    const { browser: viewer } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const seen = await viewer.get("/console/sandbox?env=test");
    assert.equal(seen.status, 200);
    assert.match(textOf(seen.html), /Acme Mutual 111111111 .* on real time/);
    assert.ok(!seen.html.includes("Advance clock"));
    assert.equal((await viewer.get("/console/sandbox?env=live")).status, 404);
    const refused = await viewer.post("/console/sandbox/advance", {
      env: "test",
      company: f.cast.acme.id,
      amount: "2",
      unit: "days",
    });
    assert.equal(refused.status, 403);

    const { browser: clerk } = await consoleAs(f, {
      email: "sam@ops.test",
      role: "clerk",
      companies: f.cast.acme.tin,
    });
    const page = await clerk.get("/console/sandbox?env=test");
    assert.match(page.html, /<button type="submit">Advance clock<\/button>/);
    assert.ok(!textOf(page.html).includes("Beacon Casualty"), "Beacon is not in scope");
    const tooFar = await clerk.post("/console/sandbox/advance", {
      env: "test",
      company: f.cast.acme.id,
      amount: "400",
      unit: "days",
    });
    assert.equal(tooFar.status, 400);
    assert.match(tooFar.html, /at most 365 days at once/);
    assert.match(tooFar.html, /name="amount" value="400"/);
    const outside = await clerk.post("/console/sandbox/advance", {
      env: "test",
      company: f.cast.beacon.id,
      amount: "1",
      unit: "days",
    });
    assert.equal(outside.status, 404);
    const advanced = await clerk.post("/console/sandbox/advance", {
      env: "test",
      company: f.cast.acme.id,
      amount: "2",
      unit: "days",
    });
    assert.equal(advanced.status, 303);
    assert.equal(advanced.location, "/console/sandbox?done=advanced&env=test");
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT company_id, offset_ms FROM sandbox_clocks",
    );
    assert.deepEqual(rows.map((row) => ({ ...row })), [{
      company_id: f.cast.acme.id,
      offset_ms: 2 * 86_400_000,
    }]);
    assert.equal(await countRows(f, "test", auditRows("sandbox:advance")), 1);
    const after = await clerk.get("/console/sandbox?env=test&done=advanced");
    assert.match(textOf(after.html), /2 d ahead/);
  });
});

Deno.test("the CLI's webhooks:replay and notifications:retry: one target only, scope and roles as in the console", async () => {
  await withHttpFixture(async (f) => {
    const data = await seedConsoleData(f);
    const app = createApp({ ...f.deps, adminToken: ADMIN_TOKEN });
    const now = f.clock.now();
    const viewer = await makeOperator(f.deps, { email: "vic@ops.test", role: "viewer" }, now);
    const scoped = await makeOperator(
      f.deps,
      { email: "sam@ops.test", role: "clerk", companies: f.cast.acme.tin },
      now,
    );
    const asScoped = adminCall(app, scoped.token);
    const both = await asScoped("webhooks:replay", {
      delivery: data.acme.deliveryId,
      endpoint: data.acme.endpointId,
      since: "2026-01-01",
      environment: "test",
    });
    assert.equal(both.status, 400);
    assert.match(both.body.error.message, /either --delivery <id> or --endpoint <id> with --since/);
    const noSince = await asScoped("webhooks:replay", {
      endpoint: data.acme.endpointId,
      environment: "test",
    });
    assert.equal(noSince.status, 400);
    const hidden = await asScoped("webhooks:replay", {
      delivery: data.beacon.deliveryId,
      environment: "test",
    });
    assert.equal(hidden.status, 404);
    assert.match(hidden.body.error.message, /no webhook delivery .* in test/);
    const refused = await adminCall(app, viewer.token)("notifications:retry", {
      notification: data.notificationId,
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, "role_insufficient");
    const replayed = await asScoped("webhooks:replay", {
      endpoint: data.acme.endpointId,
      since: new Date(now - 60_000).toISOString(),
      environment: "test",
    });
    assert.equal(replayed.status, 200);
    assert.equal(replayed.body.result.replay_ids.length, 1);
    assert.equal(replayed.body.result.has_more, false);
    const retried = await asScoped("notifications:retry", { notification: data.notificationId });
    assert.equal(retried.status, 200);
    assert.deepEqual(retried.body.result, {
      environment: "live",
      notification_id: data.notificationId,
      status: "pending",
    });
  });
});
