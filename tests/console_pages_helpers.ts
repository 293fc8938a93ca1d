/**
 * Data for the console's operations pages (issue 20): a webhook endpoint per company with a failed
 * delivery (the dispatcher's last answer written as it writes it), a parked job per company, and a
 * failed live notification, made through the APIs where one exists.
 */
import assert from "node:assert/strict";
import { fundAcmeAuto, fundBeacon, type HttpFixture } from "./http_fixture.ts";

export const v1 = (f: HttpFixture, method: string, path: string, body?: unknown, key?: string) =>
  f.app.request(path, {
    method,
    headers: {
      Authorization: `Bearer ${key ?? f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

export interface SeededCompany {
  readonly endpointId: string;
  readonly webhookSecret: string;
  readonly deliveryId: string;
  readonly eventId: string;
  readonly jobId: string;
  readonly disbursementId: string;
}

/** A /v1 endpoint, a payout whose delivery to it failed for good, and a parked job. */
async function seedCompany(
  f: HttpFixture,
  key: string,
  companyId: string,
  claimId: string,
): Promise<SeededCompany> {
  const endpoint = await v1(f, "POST", "/v1/webhooks", { url: "http://127.0.0.1:9/hook" }, key);
  assert.equal(endpoint.status, 201);
  const { id: endpointId, secret: webhookSecret } = await endpoint.json();
  assert.equal(
    (await v1(f, "POST", "/v1/payees", {
      id: `p-${claimId}`,
      name: "Pat Doe",
      email: "pat@example.test",
    }, key))
      .status,
    201,
  );
  const created = await v1(f, "POST", "/v1/disbursements", {
    amount: 125,
    claim_id: claimId,
    payee: { id: `p-${claimId}` },
    modalities: ["ach"],
  }, key);
  assert.equal(created.status, 201, await created.clone().text());
  const disbursementId = (await created.json()).id as string;
  const test = f.deps.databases.test;
  const { rows } = await test.readClient.execute({
    sql: "SELECT id, event_id FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY rowid LIMIT 1",
    args: [endpointId],
  });
  const deliveryId = String(rows[0].id);
  const now = f.clock.now();
  await test.writer.write(async (tx) => {
    // What the dispatcher writes when the retry window closed on a 500.
    await tx.execute({
      sql: `UPDATE webhook_deliveries SET status = 'failed', attempt_count = 9,
              next_attempt_at = NULL, completed_at = ? WHERE endpoint_id = ?`,
      args: [now, endpointId],
    });
    await tx.execute({
      sql: "UPDATE webhook_endpoints SET failing_since = ? WHERE id = ?",
      args: [now, endpointId],
    });
    await tx.execute({
      sql: `INSERT INTO delivery_attempts (delivery_id, attempted_at, status_code, duration_ms,
              response_excerpt) VALUES (?, ?, 500, 123, 'upstream exploded')`,
      args: [deliveryId, now],
    });
    await tx.execute({
      sql: `INSERT INTO scheduled_jobs (id, company_id, kind, subject_id, due_at, payload, done_at,
              error, attempts, created_at) VALUES (?, ?, 'payout.offer_expiry', ?, ?, '{}', ?,
              'TypeError: cannot read the payout', 1, ?)`,
      args: [
        `job_parked_${claimId.replaceAll("-", "_")}`,
        companyId,
        disbursementId,
        now,
        now,
        now,
      ],
    });
  });
  return {
    endpointId,
    webhookSecret,
    deliveryId,
    eventId: String(rows[0].event_id),
    jobId: `job_parked_${claimId.replaceAll("-", "_")}`,
    disbursementId,
  };
}

export interface ConsoleData {
  readonly acme: SeededCompany;
  readonly beacon: SeededCompany;
  /** A failed live notification about Acme. */
  readonly notificationId: string;
}

export async function seedConsoleData(f: HttpFixture): Promise<ConsoleData> {
  await fundAcmeAuto(f, 1_000_000);
  const acme = await seedCompany(f, f.cast.acmeAutoKeyTest, f.cast.acme.id, "CLM-ACME");
  await fundBeacon(f, 1_000_000);
  const beacon = await seedCompany(f, f.cast.beaconKeyTest, f.cast.beacon.id, "CLM-BEACON");
  const notificationId = "ntf_failed_acme";
  await f.deps.databases.live.writer.write((tx) =>
    tx.execute({
      sql: `INSERT INTO notifications (id, company_id, channel, recipient, subject, body, links,
              status, attempt_count, last_error, created_at)
            VALUES (?, ?, 'email', 'pat@example.test', 'Your payment is ready', 'secret link inside',
              '[]', 'failed', 6, '550 mailbox unavailable', ?)`,
      args: [notificationId, f.cast.acme.id, f.clock.now()],
    })
  );
  return { acme, beacon, notificationId };
}
