/**
 * Dual control and payment approvals in real Chromium (Debian's /usr/bin/chromium driven by
 * playwright-core) against `main.ts --dev`, with the sandbox's four operators: one admin asks for
 * a live change through the CLI and cannot approve it in the console, the second admin approves
 * it there; a payment a rule holds is approved by the clerk on its page, while the viewer sees no
 * button and is refused when posting anyway.
 */
import assert from "node:assert/strict";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { freePort } from "../bench/service.ts";
import type { SandboxCredentials } from "../lib/sandbox/seed.ts";

const root = new URL("..", import.meta.url).pathname;
const CHROMIUM = "/usr/bin/chromium";

async function startService(dataDir: string, port: number) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-cron", `${root}main.ts`, "--dev"],
    env: { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", LOG_FORMAT: "off" },
    stdout: "null",
    stderr: "null",
  }).spawn();
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = await fetch(`${baseUrl}/readyz`).then((r) => r.body?.cancel().then(() => r.ok))
      .catch(() => false);
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error("the dev service did not become ready in 60 s");
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { baseUrl, child };
}

/** The CLI against the running service's data directory (dev mode: no TOTP). */
async function cli(dataDir: string, stdin: string, ...args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${root}cli/admin.ts`, ...args],
    env: { DATA_DIR: dataDir, NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const output = await child.output();
  const stdout = new TextDecoder().decode(output.stdout);
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  return stdout;
}

async function signIn(
  context: BrowserContext,
  baseUrl: string,
  operator: { email: string; password: string },
): Promise<Page> {
  const page = await context.newPage();
  page.on("dialog", (dialog) => dialog.accept());
  await page.goto(`${baseUrl}/console/sign-in`);
  await page.getByLabel("E-mail").fill(operator.email);
  await page.getByLabel("Password").fill(operator.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  return page;
}

Deno.test({
  name:
    "browser: two admins decide a live change in the console; a clerk approves a held payment, a viewer cannot",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dataDir = await Deno.makeTempDir({ prefix: "disbursement-dual-e2e-" });
    const service = await startService(dataDir, freePort());
    const { baseUrl } = service;
    let browser: Browser | null = null;
    try {
      const credentials = JSON.parse(
        await Deno.readTextFile(`${dataDir}/sandbox-credentials.json`),
      ) as SandboxCredentials;
      const byRole = (email: string) => credentials.operators!.find((o) => o.email === email)!;
      const [admin, admin2, clerk, viewer] = [
        byRole("admin@sandbox.test"),
        byRole("admin2@sandbox.test"),
        byRole("clerk@sandbox.test"),
        byRole("viewer@sandbox.test"),
      ];
      const acme = credentials.companies[0];

      // The first admin asks, through the CLI, for a live payment rule: a live change.
      await cli(dataDir, `${admin.email}\n${admin.password}\n\n`, "login");
      const asked = JSON.parse(
        await cli(
          dataDir,
          "",
          "payment-rule:set",
          "--tin",
          acme.tin,
          "--threshold",
          "50000",
          "--json",
        ),
      );
      assert.equal(asked.status, "pending_approval");
      // And a test rule, which applies at once: payments of Acme over $1,000.00 wait.
      await cli(
        dataDir,
        "",
        "payment-rule:set",
        "--tin",
        acme.tin,
        "--threshold",
        "1000",
        "--environment",
        "test",
      );

      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
      });

      // The requester sees the approval but no button to decide it.
      const first = await signIn(await browser.newContext(), baseUrl, admin);
      await first.goto(`${baseUrl}/console/approvals/${asked.approval_id}`);
      assert.match(await first.content(), /payment_rule\.change|payment approval rule/i);
      assert.equal(await first.getByRole("button", { name: "Approve" }).count(), 0);

      // The second admin approves it in the console.
      const second = await signIn(await browser.newContext(), baseUrl, admin2);
      await second.goto(`${baseUrl}/console/approvals/${asked.approval_id}`);
      await second.getByRole("button", { name: "Approve" }).click();
      await second.waitForURL(
        /\/console\/approvals\?.*done=approved|\/console\/approvals\?done=approved/,
      );
      const rules = JSON.parse(
        await cli(dataDir, "", "payment-rule:list", "--tin", acme.tin, "--json"),
      );
      assert.deepEqual(rules.rules.map((r: { threshold_cents: number }) => r.threshold_cents), [
        5_000_000,
      ]);

      // A payment over the test rule waits for approval.
      const key = acme.lines[0].key_test;
      const v1 = (method: string, path: string, body?: unknown) =>
        fetch(`${baseUrl}${path}`, {
          method,
          headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      assert.equal(
        (await v1("POST", "/v1/payees", { id: "big", email: "big@example.test", name: "Bea Big" }))
          .status,
        201,
      );
      const created = await v1("POST", "/v1/disbursements", {
        amount: 2500,
        claim_id: "CLM-HELD-1",
        payee: { id: "big" },
        modalities: ["ach"],
      });
      assert.equal(created.status, 201);
      const disbursement = await created.json() as { id: string; status: string };
      assert.equal(disbursement.status, "pending_approval");
      const pending = JSON.parse(
        await cli(dataDir, "", "payouts:pending-approval", "--environment", "test", "--json"),
      );
      const payoutId = pending.payouts[0].id as string;

      // The viewer sees the held payment but cannot approve it.
      const viewerPage = await signIn(await browser.newContext(), baseUrl, viewer);
      await viewerPage.goto(`${baseUrl}/console/payouts/${payoutId}?env=test`);
      assert.match(await viewerPage.content(), /Pending approval/);
      assert.equal(await viewerPage.getByRole("button", { name: "Approve payment" }).count(), 0);
      const csrf = await viewerPage.locator("input[name=csrf]").first().getAttribute("value") ??
        "";
      const forced = await viewerPage.request.post(
        `${baseUrl}/console/payouts/${payoutId}/approve?env=test`,
        { form: { csrf }, maxRedirects: 0 },
      );
      assert.equal(forced.status(), 403);

      // The clerk approves it on its page: the payee is offered it.
      const clerkPage = await signIn(await browser.newContext(), baseUrl, clerk);
      await clerkPage.goto(`${baseUrl}/console/payouts/${payoutId}?env=test`);
      await clerkPage.getByRole("button", { name: "Approve payment" }).click();
      await clerkPage.getByText("The payment was approved").waitFor();
      const deadline = Date.now() + 20_000;
      let status = "";
      while (Date.now() < deadline) {
        status = (await (await v1("GET", `/v1/disbursements/${disbursement.id}`)).json()).status;
        if (status === "modality_offered") break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.equal(status, "modality_offered");
    } finally {
      await browser?.close();
      service.child.kill("SIGTERM");
      await service.child.status;
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});
