/**
 * The console end to end in real Chromium (Debian's /usr/bin/chromium driven by playwright-core)
 * against `main.ts --dev` on a free loopback port, in the order of issue 20: sign in, find a
 * payout by claim id and open it, cancel it and see the balance move back, replay a failed webhook
 * delivery, retry a parked job, advance a sandbox clock, sign out. Every page is saved as a
 * screenshot under tests/artifacts/console/, and axe-core checks each page for accessibility.
 *
 * A failed delivery and a parked job take hours or a broken rail to happen by themselves; they are
 * set up with the service stopped (one delivery marked failed after its real attempt, one parked
 * job for a payout that no longer needs it), then the service is started again on the same files.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { DatabaseSync } from "node:sqlite";
import axe from "axe-core";
import { type Browser, chromium, type Page } from "playwright-core";
import { freePort } from "../bench/service.ts";
import type { SandboxCredentials } from "../lib/sandbox/seed.ts";

const mainPath = new URL("../main.ts", import.meta.url).pathname;
const artifacts = new URL("./artifacts/console/", import.meta.url).pathname;
const CHROMIUM = "/usr/bin/chromium";
const POLL_TIMEOUT_MS = 20_000;

interface Service {
  readonly baseUrl: string;
  readonly child: Deno.ChildProcess;
}

async function startService(dataDir: string, port: number): Promise<Service> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-cron", mainPath, "--dev"],
    env: { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", LOG_FORMAT: "off" },
    stdout: "null",
    stderr: "null",
  }).spawn();
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const res = await fetch(`${baseUrl}/readyz`);
      await res.body?.cancel();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error("the dev service did not become ready in 60 s");
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { baseUrl, child };
}

async function stopService(service: Service): Promise<void> {
  service.child.kill("SIGTERM");
  await service.child.status;
}

async function waitFor<T>(what: string, probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + POLL_TIMEOUT_MS;
  for (;;) {
    const found = await probe();
    if (found !== null) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A webhook receiver on loopback that answers 200 and counts what it was sent. */
function startReceiver() {
  const port = freePort();
  const received: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, async (req) => {
    received.push(await req.text());
    return new Response("ok");
  });
  return { url: `http://127.0.0.1:${port}/hook`, received, server };
}

const pagesChecked: { name: string; violations: { id: string; impact: string | null }[] }[] = [];
/** Key and webhook secrets the sandbox seeded or the test made: no page may show one. */
const secrets: string[] = [];

/** A full-page screenshot, no secret in the page, and axe-core's WCAG 2 A/AA rules run in it. */
async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${artifacts}${name}.png`, fullPage: true });
  const html = await page.content();
  for (const secret of secrets) assert.ok(!html.includes(secret), `${name} shows a secret`);
  await page.addScriptTag({ content: axe.source });
  const result = await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const axeInPage = (globalThis as any).axe;
    // deno-lint-ignore no-explicit-any
    const run = await axeInPage.run((globalThis as any).document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] },
    });
    return run.violations.map((v: { id: string; impact: string | null; nodes: unknown[] }) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.length,
    }));
  });
  pagesChecked.push({ name, violations: result });
}

/** Acme's `auto` line's available balance as the Overview shows it, in cents. */
async function acmeAutoAvailable(page: Page, baseUrl: string): Promise<number> {
  await page.goto(`${baseUrl}/console?env=test`);
  const row = page.getByRole("row").filter({ hasText: "Acme Mutual" }).filter({
    has: page.getByRole("cell", { name: "auto", exact: true }),
  });
  const text = await row.getByRole("cell").nth(2).innerText();
  return Math.round(Number(text.replace(/[$,]/g, "")) * 100);
}

Deno.test({
  name: "browser: the console from sign-in to sign-out, every page screenshotted and checked",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await Deno.mkdir(artifacts, { recursive: true });
    const dataDir = await Deno.makeTempDir({ prefix: "disbursement-console-e2e-" });
    const port = freePort();
    const receiver = startReceiver();
    let service = await startService(dataDir, port);
    const { baseUrl } = service;
    let browser: Browser | null = null;
    try {
      const credentials = JSON.parse(
        await Deno.readTextFile(`${dataDir}/sandbox-credentials.json`),
      ) as SandboxCredentials;
      const operator = credentials.operator!;
      const lineKey = credentials.companies[0].lines[0].key_test;
      const v1 = (method: string, path: string, body?: unknown) =>
        fetch(`${baseUrl}${path}`, {
          method,
          headers: { Authorization: `Bearer ${lineKey}`, "Content-Type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      for (const company of credentials.companies) {
        secrets.push(company.company_api_key);
        for (const user of company.users) secrets.push(user.api_key_test, user.api_key_live);
        for (const line of company.lines) secrets.push(line.key_test, line.key_live);
      }
      const endpoint = await v1("POST", "/v1/webhooks", { url: receiver.url });
      assert.equal(endpoint.status, 201);
      secrets.push((await endpoint.json() as { secret: string }).secret);
      assert.ok(secrets.every((secret) => typeof secret === "string" && secret.length > 10));
      assert.equal(
        (await v1("POST", "/v1/payees", {
          id: "noaction",
          email: "noaction@example.test",
          name: "Nora Action",
        }))
          .status,
        201,
      );
      const created = await v1("POST", "/v1/disbursements", {
        amount: 1250,
        claim_id: "CLM-E2E-7",
        payee: { id: "noaction" },
        modalities: ["ach", "check"],
      });
      assert.equal(created.status, 201);
      const disbursement = await created.json() as { id: string };
      await waitFor("the offer", async () => {
        const res = await v1("GET", `/v1/disbursements/${disbursement.id}`);
        return (await res.json() as { status: string }).status === "modality_offered" ? true : null;
      });
      await waitFor(
        "a delivery",
        () => Promise.resolve(receiver.received.length > 0 ? true : null),
      );

      // A dead endpoint (nothing listens on its port): its deliveries fail and wait for retries.
      const deadUrl = `http://127.0.0.1:${freePort()}/dead-hook`;
      const dead = await v1("POST", "/v1/webhooks", { url: deadUrl });
      assert.equal(dead.status, 201);
      secrets.push((await dead.json() as { secret: string }).secret);
      // A returned ACH payout: the sandbox's fail+ach payee chooses ACH, the bank returns it (R03)
      // two banking days later, and the payout is offered again.
      assert.equal(
        (await v1("POST", "/v1/payees", {
          id: "fail+ach",
          email: "fail+ach@example.test",
          name: "Rex Return",
        })).status,
        201,
      );
      const returning = await v1("POST", "/v1/disbursements", {
        amount: 300,
        claim_id: "CLM-E2E-R03",
        payee: { id: "fail+ach" },
        modalities: ["ach"],
      });
      assert.equal(returning.status, 201);
      const returned = await returning.json() as { id: string };
      await waitFor("the return and the re-offer", async () => {
        const res = await v1("GET", `/v1/disbursements/${returned.id}`);
        const { status } = await res.json() as { status: string };
        if (status === "modality_offered") return true;
        const advanced = await v1("POST", "/v1/sandbox/clock/advance", { seconds: 86_400 });
        await advanced.body?.cancel();
        return null;
      });

      // Preconditions that take hours to happen by themselves, set with the service stopped.
      await stopService(service);
      const db = new DatabaseSync(`${dataDir}/test.db`);
      try {
        const now = Date.now();
        const delivery = db.prepare(
          "SELECT id FROM webhook_deliveries ORDER BY created_at, id LIMIT 1",
        ).get() as { id: string };
        db.prepare(
          `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, completed_at = ?
            WHERE id = ?`,
        ).run(now, delivery.id);
        const payout = db.prepare(
          "SELECT p.id, p.company_id FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id WHERE d.external_uuid = ?",
        ).get(disbursement.id) as { id: string; company_id: string };
        db.prepare(
          `INSERT INTO scheduled_jobs (id, company_id, kind, subject_id, due_at, payload, done_at, error,
             attempts, created_at) VALUES ('job_e2e_parked', ?, 'payout.offer', ?, ?, '{}', ?, ?, 5, ?)`,
        ).run(
          payout.company_id,
          payout.id,
          now - 60_000,
          now,
          "the rail answered 503 five times",
          now,
        );
      } finally {
        db.close();
      }
      service = await startService(dataDir, port);

      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-background-networking",
          "--disable-quic",
          "--no-first-run",
          "--disable-component-update",
          "--disable-sync",
        ],
      });
      // axe-core is injected as an inline script, which the console's CSP refuses otherwise.
      const context = await browser.newContext({
        bypassCSP: true,
        timezoneId: "America/Chicago",
        viewport: { width: 1280, height: 900 },
      });
      const page = await context.newPage();
      page.on("dialog", (dialog) => dialog.accept());

      // 1. Sign in.
      await page.goto(`${baseUrl}/console`);
      assert.match(page.url(), /\/console\/sign-in/);
      await shot(page, "01-sign-in");
      await page.getByLabel("E-mail").fill(operator.email);
      await page.getByLabel("Password").fill(operator.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "Overview" }).waitFor();
      // The sign-in page's script told the server the browser's zone, so the first page after it
      // shows its times there and does not reload itself (a reload here once raced the checks).
      assert.equal(await page.locator("html").getAttribute("data-tz"), "America/Chicago");
      assert.match(await page.locator("footer").innerText(), /Times in America\/Chicago/);
      assert.ok(await page.locator("#test-banner").isVisible());
      await shot(page, "02-overview");
      const before = await acmeAutoAvailable(page, baseUrl);

      // The returned payout and the dead endpoint are in Needs action, with meaning and next step.
      await page.getByRole("link", { name: "Needs action", exact: true }).first().click();
      await page.getByRole("heading", { name: "Needs action" }).waitFor();
      await shot(page, "02-needs-action");
      const returnedRow = page.getByRole("row").filter({ hasText: "Rex Return" });
      assert.match(
        await returnedRow.innerText(),
        /failed, offered again to the payee\s+R03: The bank returned the payment: no account matches the number, or the name does not match it\.\s+Next step: Offer the payment again so the payee can give other bank details\./,
      );
      assert.match(
        await page.getByRole("row").filter({ hasText: deadUrl }).innerText(),
        /failed or retrying/,
      );
      // Offered again, it is not "failed" now, and stays findable as failed or returned.
      await page.goto(`${baseUrl}/console/payouts?env=test&status=failed`);
      assert.equal(await page.getByRole("link", { name: "Rex Return" }).count(), 0);
      await page.goto(`${baseUrl}/console/payouts?env=test`);
      await page.getByLabel("Needing us").selectOption({ label: "Failed or returned, any time" });
      await page.getByRole("button", { name: "Search" }).click();
      await page.getByRole("link", { name: "Rex Return" }).waitFor();
      await shot(page, "02-payouts-failed-any-time");
      await page.getByRole("link", { name: "Rex Return" }).click();
      assert.match(
        await page.locator("dl.facts").first().innerText(),
        // A test payee chose ACH without entering details: no account ending to show.
        /Last failure\s+R03: The bank returned the payment[^]*\nACH, \w{3} \d+, \d{4}/,
      );
      // On a phone: the tab bar shows there is more, and a long endpoint URL wraps.
      await page.setViewportSize({ width: 390, height: 844 });
      const nav = page.locator("nav.pages");
      assert.ok(
        await nav.evaluate((el) => el.scrollWidth > el.clientWidth),
        "the tabs do not overflow a phone: nothing to hint",
      );
      assert.match(
        // deno-lint-ignore no-explicit-any
        await nav.evaluate((el) => (globalThis as any).getComputedStyle(el).backgroundImage),
        /radial-gradient/,
      );
      await page.goto(`${baseUrl}/console/webhooks?env=test`);
      await page.getByRole("link", { name: deadUrl }).click();
      await shot(page, "02-webhook-endpoint-phone");
      assert.ok(
        await page.evaluate(() =>
          // deno-lint-ignore no-explicit-any
          (globalThis as any).document.documentElement.scrollWidth <= 390
        ),
        "the endpoint page is wider than a phone",
      );
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(`${baseUrl}/console?env=test`);

      // 2. Find the payout by its claim id and open it.
      await page.getByRole("link", { name: "Payouts", exact: true }).click();
      await page.getByLabel("Claim id").fill("CLM-E2E-7");
      await page.getByRole("button", { name: "Search" }).click();
      await shot(page, "03-payouts-search");
      await page.getByRole("link", { name: "Nora Action" }).click();
      await page.getByRole("heading", { name: "Payout to Nora Action" }).waitFor();
      await shot(page, "04-payout-detail");
      // The same page on a phone: one column, the tables scroll sideways inside their frame.
      await page.setViewportSize({ width: 390, height: 844 });
      await shot(page, "04-payout-detail-phone");
      assert.ok(
        await page.evaluate(() =>
          // deno-lint-ignore no-explicit-any
          (globalThis as any).document.documentElement.scrollWidth <= 390
        ),
        "the payout page is wider than a phone",
      );
      await page.setViewportSize({ width: 1280, height: 900 });

      // 3. Cancel it, and see the balance move back.
      await page.getByRole("button", { name: "Cancel payout" }).click();
      await page.getByText("The payout was canceled").waitFor();
      await shot(page, "05-payout-canceled");
      const after = await acmeAutoAvailable(page, baseUrl);
      assert.equal(after - before, 125_000);

      // 4. Replay the failed webhook delivery.
      await page.goto(`${baseUrl}/console/webhooks?env=test`);
      await shot(page, "06-webhooks");
      await page.getByRole("link", { name: receiver.url }).first().click();
      await shot(page, "07-webhook-deliveries");
      const sent = receiver.received.length;
      await page.getByRole("button", { name: /^Replay delivery/ }).first().click();
      await page.waitForLoadState();
      await shot(page, "08-webhook-replayed");
      await waitFor(
        "the replayed delivery",
        () => Promise.resolve(receiver.received.length > sent ? true : null),
      );

      // 5. Retry the parked job.
      await page.goto(`${baseUrl}/console/jobs?env=test`);
      await shot(page, "09-jobs");
      await page.getByRole("button", { name: "Retry job job_e2e_parked" }).click();
      await page.waitForLoadState();
      await shot(page, "10-job-retried");
      assert.equal(await page.getByRole("button", { name: "Retry job job_e2e_parked" }).count(), 0);

      // 6. Advance a sandbox clock.
      await page.goto(`${baseUrl}/console/sandbox?env=test`);
      await shot(page, "11-sandbox");
      const clockRow = page.getByRole("row").filter({ hasText: "Acme Mutual" }).first();
      const clockBefore = await clockRow.innerText();
      await page.getByLabel("Company").selectOption({ label: "Acme Mutual" });
      await page.getByLabel("Advance by").fill("2");
      await page.getByLabel("Unit").selectOption("days");
      await page.getByRole("button", { name: "Advance clock" }).click();
      await page.waitForLoadState();
      await shot(page, "12-sandbox-advanced");
      assert.notEqual(
        await page.getByRole("row").filter({ hasText: "Acme Mutual" }).first().innerText(),
        clockBefore,
      );

      // Every other page, for the record.
      for (
        const name of [
          "disbursements",
          "ledger",
          "funding",
          "approvals",
          "audit",
          "reviews",
          "keys",
          "bank-files",
        ]
      ) {
        const response = await page.goto(`${baseUrl}/console/${name}?env=test`);
        // A page not built (bank files before the live rails) answers 404 and has no picture.
        if (response?.status() === 404) {
          console.log(`/console/${name} is not served`);
          continue;
        }
        assert.equal(response?.status(), 200, name);
        await shot(page, `13-${name}`);
      }
      // A line's day, from its date in the tie-out; the PayPal batches with their balance.
      await page.goto(`${baseUrl}/console/ledger/tie-out?env=test`);
      await page.getByRole("table", { name: /Acme Mutual \/ auto/ }).getByRole("link").first()
        .click();
      await page.getByRole("heading", { name: /^Acme Mutual \/ auto on \d{4}-\d{2}-\d{2}$/ })
        .waitFor();
      await shot(page, "13-ledger-day");
      await page.goto(`${baseUrl}/console/bank-files/paypal?env=test`);
      await page.getByRole("heading", { name: "Bank files" }).waitFor();
      await shot(page, "13-paypal-batches");
      // An admin imports a paid-items file by hand; in test it is applied at once.
      await page.goto(`${baseUrl}/console/bank-files/import?env=test`);
      await page.getByLabel("Kind").selectOption("check_paid");
      await page.getByLabel("Company (paid items and statements)").selectOption({ index: 1 });
      await page.getByLabel("File", { exact: true }).setInputFiles({
        name: "paid.csv",
        mimeType: "text/csv",
        buffer: Buffer.from("check_number,amount,paid_date\n987654,1.00,2026-01-08\n"),
      });
      await page.getByRole("button", { name: "Import" }).click();
      await page.getByText("Imported in test.").waitFor();
      await shot(page, "13-hand-import");
      await page.goto(`${baseUrl}/console/payouts?env=live`);
      await shot(page, "14-live-needs-totp");

      // 7. Sign out.
      await page.goto(`${baseUrl}/console?env=test`);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByText("You are signed out.").waitFor();
      await shot(page, "15-signed-out");
      await page.goto(`${baseUrl}/console/payouts`);
      assert.match(page.url(), /\/console\/sign-in/);

      const serious = pagesChecked.flatMap((p) =>
        p.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
          .map((v) => `${p.name}: ${v.id}`)
      );
      console.log(
        pagesChecked.map((p) =>
          `${p.name}: ${p.violations.length === 0 ? "no violations" : JSON.stringify(p.violations)}`
        ).join("\n"),
      );
      assert.deepEqual(serious, []);
    } finally {
      await browser?.close();
      await stopService(service).catch(() => {});
      await receiver.server.shutdown();
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});
