/**
 * The console's and the portal's content security policy holds in a real browser: every page of
 * both, loaded in Chromium (Debian's /usr/bin/chromium driven by playwright-core) against
 * `main.ts --dev`, with the policy enforced (no bypass), reports no violation. Inline `style=`
 * attributes were refused by `style-src 'self'` on 17 pages (the sandbox inbox lost its line
 * breaks); every style now comes from the stylesheets.
 */
import assert from "node:assert/strict";
import { chromium, type Page } from "playwright-core";
import type { SandboxCredentials } from "../lib/sandbox/seed.ts";
import { startServiceProcess } from "./service_process.ts";
const CHROMIUM = "/usr/bin/chromium";

/** Every console page an admin can open without an object id, in the test environment. */
const CONSOLE_PAGES = [
  "/console",
  "/console/needs-action",
  "/console/payouts",
  "/console/disbursements",
  "/console/funding",
  "/console/ledger",
  "/console/ledger/transactions",
  "/console/ledger/tie-out",
  "/console/reconciliation",
  "/console/webhooks",
  "/console/jobs",
  "/console/jobs/notifications",
  "/console/sandbox",
  "/console/bank-files",
  "/console/bank-files/batches",
  "/console/bank-files/checks",
  "/console/bank-files/check-files",
  "/console/bank-files/paypal",
  "/console/bank-files/imports",
  "/console/bank-files/import",
  "/console/reviews",
  "/console/reviews/checks",
  "/console/rail-exceptions",
  "/console/approvals",
  "/console/keys",
  "/console/audit",
];

interface InboxMessage {
  readonly to: string;
  readonly body: string;
  readonly links: string[];
  readonly code?: string;
}

Deno.test({
  name: "browser: no page of the console or the portal breaks its content security policy",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dataDir = await Deno.makeTempDir({ prefix: "disbursement-csp-e2e-" });
    const service = await startServiceProcess(dataDir, { dev: true });
    const { baseUrl } = service;
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
    });
    try {
      const credentials = JSON.parse(
        await Deno.readTextFile(`${dataDir}/sandbox-credentials.json`),
      ) as SandboxCredentials;
      const lineKey = credentials.companies[0].lines[0].key_test;
      const v1 = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${baseUrl}${path}`, {
          method,
          headers: { Authorization: `Bearer ${lineKey}`, "Content-Type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: await res.json() as Record<string, unknown> };
      };
      assert.equal(
        (await v1("POST", "/v1/payees", { id: "noaction", email: "nora@example.test" })).status,
        201,
      );
      const created = await v1("POST", "/v1/disbursements", {
        amount: 125,
        claim_id: "CLM-CSP",
        payee: { id: "noaction" },
        modalities: ["ach", "check"],
      });
      assert.equal(created.status, 201);
      const inbox = async () =>
        ((await (await fetch(`${baseUrl}/sandbox/inbox.json`)).json()) as {
          data: InboxMessage[];
        }).data.filter((m) => m.to === "nora@example.test");
      let offer: InboxMessage | undefined;
      for (let i = 0; i < 200 && !offer; i++) {
        offer = (await inbox()).find((m) => m.links.some((l) => l.includes("/portal/")));
        if (!offer) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(offer, "the payee was sent a portal link");

      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const violations: string[] = [];
      let current = "";
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) {
          violations.push(`${current}: ${message.text()}`);
        }
      });
      const visit = async (target: Page, path: string) => {
        current = path;
        const answer = await target.goto(path.startsWith("http") ? path : `${baseUrl}${path}`);
        assert.ok(answer && answer.status() < 500, `${path} answered ${answer?.status()}`);
        // Violations are reported as the page applies its styles and scripts.
        await target.waitForLoadState("load");
      };

      // The console: sign in, then every page, in the test environment.
      await visit(page, "/console/sign-in");
      await page.getByLabel("E-mail").fill(credentials.operator!.email);
      await page.getByLabel("Password").fill(credentials.operator!.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL(/\/console(\?|$)/);
      for (const path of CONSOLE_PAGES) await visit(page, `${path}?env=test`);
      await visit(page, `/console/payouts?env=test&claim_id=CLM-CSP`);
      const payoutLink = page.getByRole("link", { name: "noaction" }).first();
      if (await payoutLink.count() > 0) {
        current = "payout detail";
        await payoutLink.click();
        await page.waitForLoadState("load");
      }

      // The portal: the landing page, the link, its code, the documents and the methods.
      await visit(page, `/pay/${created.body.id}`);
      await visit(page, offer!.links.find((l) => l.includes("/portal/"))!);
      const before = (await inbox()).length;
      await page.getByRole("button", { name: "Send me a code" }).click();
      let code: string | undefined;
      for (let i = 0; i < 100 && !code; i++) {
        const messages = await inbox();
        if (messages.length > before) code = messages.find((m) => m.code)?.code;
        if (!code) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(code, "a verification code was sent");
      current = "portal: code entered";
      await page.getByLabel("Enter the 6-digit code").fill(code!);
      await page.getByRole("button", { name: "Confirm" }).click();
      await page.waitForLoadState("load");
      current = "portal: after verification";
      await visit(page, "/sandbox/inbox");

      assert.deepEqual(violations, [], violations.join("\n"));
    } finally {
      await browser.close();
      await service.stop();
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});
