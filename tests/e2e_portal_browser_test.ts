/**
 * End to end in real Chromium (Debian's /usr/bin/chromium driven by playwright-core) against
 * `main.ts --dev` on a free loopback port: a payee verifies, signs, chooses ACH with a test
 * account and is paid after a clock advance; a payee with two parties gets both endorsements
 * through their own links and chooses a check with priority postage; three wrong codes lock a
 * link; a payee switches to Spanish and keeps it through the code, signature and choice. Every
 * page is saved as a screenshot under tests/artifacts/portal/.
 */
import assert from "node:assert/strict";
import { PDFDocument } from "pdf-lib";
import { type Browser, chromium, type Page } from "playwright-core";
import { freePort } from "../bench/service.ts";
import type { SandboxCredentials } from "../lib/sandbox/seed.ts";
import type { InboxMessage } from "../routes/sandbox.tsx";

const mainPath = new URL("../main.ts", import.meta.url).pathname;

const artifacts = new URL("./artifacts/portal/", import.meta.url).pathname;
const CHROMIUM = "/usr/bin/chromium";
const POLL_TIMEOUT_MS = 15_000;

class Service {
  constructor(
    readonly baseUrl: string,
    readonly child: Deno.ChildProcess,
    readonly dataDir: string,
    readonly token: string,
  ) {}

  static async start(): Promise<Service> {
    const dataDir = await Deno.makeTempDir({ prefix: "disbursement-portal-e2e-" });
    const port = freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-cron", mainPath, "--dev"],
      env: { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", LOG_FORMAT: "off" },
      stdout: "null",
      stderr: "null",
    }).spawn();
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
    const credentials = JSON.parse(
      await Deno.readTextFile(`${dataDir}/sandbox-credentials.json`),
    ) as SandboxCredentials;
    const acme = credentials.companies[0];
    const login = await fetch(`${baseUrl}/api/authenticate`, {
      method: "POST",
      headers: { Authorization: `Basic ${btoa(`${acme.tin}:${acme.users[0].api_key_test}`)}` },
    });
    const { access_token } = await login.json() as { access_token: string };
    return new Service(baseUrl, child, dataDir, access_token);
  }

  async api(method: string, path: string, body?: unknown): Promise<Response> {
    return await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${this.token}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  async inbox(): Promise<InboxMessage[]> {
    const res = await fetch(`${this.baseUrl}/sandbox/inbox.json`);
    return (await res.json() as { data: InboxMessage[] }).data;
  }

  /** Waits for a message to `to` matching `pattern` that is not among `seen`. */
  async message(to: string, pattern: RegExp, seen = new Set<string>()): Promise<InboxMessage> {
    const deadline = Date.now() + POLL_TIMEOUT_MS;
    for (;;) {
      const found = (await this.inbox()).find((m) =>
        m.to === to && !seen.has(m.id) && (pattern.test(m.subject ?? "") || pattern.test(m.body))
      );
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no message to ${to} matching ${pattern}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Waits until the payee's transaction shows `status` (the scheduler submits a choice to the rail). */
  async payeeStatus(transactionPath: string, status: string): Promise<void> {
    const deadline = Date.now() + POLL_TIMEOUT_MS;
    for (;;) {
      const res = await this.api("GET", transactionPath);
      const seen = (await res.json() as { status: string }).status;
      if (seen === status) return;
      if (Date.now() > deadline) throw new Error(`${transactionPath} is ${seen}, not ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async seen(): Promise<Set<string>> {
    return new Set((await this.inbox()).map((m) => m.id));
  }

  async stop(): Promise<void> {
    this.child.kill("SIGTERM");
    await this.child.status;
    await Deno.remove(this.dataDir, { recursive: true });
  }
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${artifacts}${name}.png`, fullPage: true });
}

/** Opens a portal link, asks for a code, reads it from the sandbox inbox and enters it. */
async function verifyInBrowser(
  service: Service,
  page: Page,
  link: string,
  to: string,
  prefix: string,
): Promise<void> {
  await page.goto(link);
  await shot(page, `${prefix}-1-verify`);
  const seen = await service.seen();
  await page.getByRole("button", { name: "Send me a code" }).click();
  const { code } = await service.message(to, /verification code/, seen);
  await page.getByLabel("Enter the 6-digit code").fill(code!);
  await shot(page, `${prefix}-2-code`);
  await page.getByRole("button", { name: "Confirm" }).click();
}

async function signDocuments(page: Page, name: string, prefix: string): Promise<void> {
  await page.waitForSelector("h1:has-text('Read and sign')");
  await shot(page, `${prefix}-3-sign`);
  await page.getByLabel("Type your full name to sign").fill(name);
  await page.getByLabel(/I have read these documents/).check();
  await page.getByRole("button", { name: "Sign and continue" }).click();
}

async function withBrowser(fn: (browser: Browser, service: Service) => Promise<void>) {
  await Deno.mkdir(artifacts, { recursive: true });
  const service = await Service.start();
  const browser = await chromium.launch({
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
  try {
    const pdf = await PDFDocument.create();
    pdf.addPage([612, 792]).drawText("Release of claim", { x: 72, y: 700, size: 18 });
    const uploaded = await service.api("POST", "/api/documents", {
      doc_type_id: 1,
      name: "Release of claim",
      is_sign_required: true,
      pdf_base64: (await pdf.save()).toBase64(),
    });
    assert.equal(uploaded.status, 201);
    await fn(browser, service);
  } finally {
    await browser.close();
    await service.stop();
  }
}

const payee = (uuid: string, extra: Record<string, unknown> = {}) => ({
  payee_type_id: 1,
  amount: 1250.5,
  payee_uuid: uuid,
  email: `${uuid}@example.test`,
  first_name: "Pat",
  last_name: "Doe",
  allowed_payment_method_ids: [1, 2, 7],
  ...extra,
});

Deno.test({
  name: "browser: verify, sign, ACH with a test account, completed after a clock advance",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withBrowser(async (browser, service) => {
      const created = await service.api("POST", "/api/disbursements", {
        disbursement_uuid: "E2E-ACH",
        large_disbursement: false,
        payees: [payee("pat")],
      });
      assert.equal(created.status, 201, await created.text());
      const offer = await service.message("pat@example.test", /has a payment for you/);
      const page = await (await browser.newContext()).newPage();
      await verifyInBrowser(service, page, offer.links[0], "pat@example.test", "ach");
      await signDocuments(page, "Pat Doe", "ach");

      await page.waitForSelector("h1:has-text('Choose how to be paid')");
      await shot(page, "ach-4-choose");
      await page.getByLabel("Direct deposit to a bank account (ACH)").check();
      await page.getByRole("button", { name: "Continue" }).click();
      await page.getByLabel(/Routing number/).fill("011000015");
      await page.getByLabel("Account number", { exact: true }).fill("000123456789");
      await page.getByLabel("Account number again").fill("000123456789");
      await page.getByLabel("Type your full name to sign the authorization").fill("Pat Doe");
      await page.getByLabel(/I authorize Acme Mutual/).check();
      await shot(page, "ach-5-details");
      await page.getByRole("button", { name: /Confirm: get paid this way/ }).click();
      await page.waitForSelector("text=Your choice is confirmed");
      assert.match(await page.textContent("main") ?? "", /Checking account ending in 6789/);
      await shot(page, "ach-6-confirmed");
      // Queued for the sandbox bank's next cutoff (10:30, 14:45 or 17:00 New York).
      await service.payeeStatus(
        "/api/disbursements/E2E-ACH/payees/pat/transaction",
        "PaymentMethodSelected",
      );

      // The next cutoff's file, then the return window (effective date + 2 banking days): a week
      // and a day covers any weekend plus a holiday (Thanksgiving).
      const advanced = await service.api("POST", "/api/sandbox/clock/advance", {
        seconds: 8 * 86_400,
      });
      assert.equal(advanced.status, 200);
      await page.reload();
      assert.equal(await page.textContent("h1"), "Paid");
      await shot(page, "ach-7-paid");
      const transaction = await service.api(
        "GET",
        "/api/disbursements/E2E-ACH/payees/pat/transaction",
      );
      const body = await transaction.json();
      assert.equal(body.status, "Completed");
      assert.equal(body.account_last_four, "6789");
    }),
});

Deno.test({
  name: "browser: two parties endorse through their own links, then a check with priority postage",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withBrowser(async (browser, service) => {
      const created = await service.api("POST", "/api/disbursements", {
        disbursement_uuid: "E2E-PARTIES",
        large_disbursement: false,
        payees: [payee("sam", { permission_required_from: ["lienholder", "co-owner"] })],
        authorization_parties: [
          {
            party_uuid: "lienholder",
            party_type: "INDIVIDUAL",
            title: "Lienholder",
            email: "lien@example.test",
            first_name: "Lee",
            last_name: "Holder",
          },
          {
            party_uuid: "co-owner",
            party_type: "INDIVIDUAL",
            title: "Co-owner",
            email: "cory@example.test",
            first_name: "Cory",
            last_name: "Owner",
          },
        ],
      });
      assert.equal(created.status, 201, await created.text());
      const notice = await service.message("sam@example.test", /needs approval/);
      const payeePage = await (await browser.newContext()).newPage();
      await verifyInBrowser(service, payeePage, notice.links[0], "sam@example.test", "parties");
      await signDocuments(payeePage, "Sam Doe", "parties");
      await payeePage.waitForSelector("h1:has-text('Approvals needed')");
      await shot(payeePage, "parties-4-approvals");
      await payeePage.getByRole("button", { name: "Ask Lee Holder to approve" }).click();
      await payeePage.getByRole("button", { name: "Ask Cory Owner to approve" }).click();
      await payeePage.waitForSelector("text=We sent Cory Owner a link");
      await shot(payeePage, "parties-5-asked");

      const seenBeforeLast = await service.seen();
      for (
        const [to, name, slug] of [
          ["lien@example.test", "Lee Holder", "lienholder"],
          ["cory@example.test", "Cory Owner", "co-owner"],
        ]
      ) {
        const request = await service.message(to, /approval is needed/);
        // Each party in its own browser: its own link, its own code.
        const partyPage = await (await browser.newContext()).newPage();
        await verifyInBrowser(service, partyPage, request.links[0], to, `party-${slug}`);
        await partyPage.waitForSelector("h1:has-text('Approve a payment')");
        await shot(partyPage, `party-${slug}-3-approve`);
        await partyPage.getByLabel("Type your full name to approve").fill(name);
        await partyPage.getByLabel(/I approve this payment/).check();
        await partyPage.getByRole("button", { name: "Approve the payment" }).click();
        await partyPage.waitForSelector("h1:has-text('Thank you')");
        await shot(partyPage, `party-${slug}-4-done`);
      }

      const allIn = await service.message(
        "sam@example.test",
        /every approval is in/i,
        seenBeforeLast,
      );
      const page = await (await browser.newContext()).newPage();
      await verifyInBrowser(service, page, allIn.links[0], "sam@example.test", "check");
      await page.waitForSelector("h1:has-text('Choose how to be paid')");
      await page.getByLabel("Paper check by mail").check();
      await page.getByRole("button", { name: "Continue" }).click();
      await page.getByLabel("Street address").fill("12 Elm Street");
      await page.getByLabel("City").fill("Springfield");
      await page.getByLabel("State").selectOption("IL");
      await page.getByLabel("ZIP code").fill("62704");
      await page.getByLabel("Priority Mail", { exact: true }).check();
      await shot(page, "check-4-details");
      await page.getByRole("button", { name: /Confirm: get paid this way/ }).click();
      await page.waitForSelector("text=Your choice is confirmed");
      assert.match(
        await page.textContent("main") ?? "",
        /Check mailed to 12 Elm Street, Springfield, IL 62704 \(PR\)/,
      );
      await shot(page, "check-5-confirmed");

      await service.payeeStatus(
        "/api/disbursements/E2E-PARTIES/payees/sam/transaction",
        "Processing",
      );
    }),
});

Deno.test({
  name: "browser: three wrong codes lock the link",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withBrowser(async (browser, service) => {
      const created = await service.api("POST", "/api/disbursements", {
        disbursement_uuid: "E2E-LOCK",
        large_disbursement: false,
        payees: [payee("lou")],
      });
      assert.equal(created.status, 201);
      const offer = await service.message("lou@example.test", /has a payment for you/);
      const page = await (await browser.newContext()).newPage();
      await page.goto(offer.links[0]);
      const seen = await service.seen();
      await page.getByRole("button", { name: "Send me a code" }).click();
      const { code } = await service.message("lou@example.test", /verification code/, seen);
      const wrong = code === "000000" ? "111111" : "000000";
      for (const left of ["2 tries left", "1 try left"]) {
        await page.getByLabel("Enter the 6-digit code").fill(wrong);
        await page.getByRole("button", { name: "Confirm" }).click();
        await page.waitForSelector(`text=${left}`);
      }
      await shot(page, "lock-1-last-try");
      await page.getByLabel("Enter the 6-digit code").fill(wrong);
      await page.getByRole("button", { name: "Confirm" }).click();
      await page.waitForSelector("h1:has-text('Too many wrong codes')");
      assert.match(await page.textContent("main") ?? "", /locked for 15 minutes/);
      await shot(page, "lock-2-locked");
      await page.reload();
      assert.equal(await page.textContent("h1"), "Too many wrong codes");
    }),
});

Deno.test({
  name: "browser: the Español switch holds through the code, the signature and the choice",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withBrowser(async (browser, service) => {
      const created = await service.api("POST", "/api/disbursements", {
        disbursement_uuid: "E2E-ES",
        large_disbursement: false,
        payees: [payee("rosa", { first_name: "Rosa" })],
      });
      assert.equal(created.status, 201);
      const offer = await service.message("rosa@example.test", /has a payment for you/);
      const page = await (await browser.newContext()).newPage();
      await page.goto(offer.links[0]);
      assert.equal(await page.textContent("h1"), "Confirm it is you");
      await page.getByRole("link", { name: "Español" }).click();
      await page.waitForSelector("h1:has-text('Confirme su identidad')");
      assert.equal(await page.getAttribute("html", "lang"), "es");
      await shot(page, "es-1-verify");
      const seen = await service.seen();
      await page.getByRole("button", { name: "Envíenme un código" }).click();
      const { code } = await service.message("rosa@example.test", /verification code/, seen);
      await page.getByLabel("Escriba el código de 6 dígitos").fill(code!);
      await page.getByRole("button", { name: "Confirmar", exact: true }).click();
      await page.waitForSelector("h1:has-text('Lea y firme')");
      await shot(page, "es-2-sign");
      await page.getByLabel("Escriba su nombre completo para firmar").fill("Rosa Doe");
      await page.getByLabel(/Leí estos documentos/).check();
      await page.getByRole("button", { name: "Firmar y continuar" }).click();
      await page.waitForSelector("h1:has-text('Elija cómo quiere recibir su pago')");
      assert.equal(await page.getAttribute("html", "lang"), "es");
      await shot(page, "es-3-choose");
      await page.getByRole("link", { name: "English" }).click();
      await page.waitForSelector("h1:has-text('Choose how to be paid')");
      assert.equal(await page.getAttribute("html", "lang"), "en");
    }),
});
