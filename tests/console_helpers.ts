/**
 * A browser for console tests over `app.request`: a cookie jar, the CSRF token of the last page
 * read, and the real sign-in form (password and a TOTP code of the fake clock).
 */
import { addFunds } from "../lib/funding/store.ts";
import { totpCodeAt } from "../lib/operators/totp.ts";
import type { Role } from "../lib/operators/rules.ts";
import type { HttpFixture } from "./http_fixture.ts";
import { makeOperator, type TestOperator } from "./operator_helpers.ts";

/** The peer address every console request comes from (the audit origin reads it). */
const LOOPBACK = { remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 50000 } };

export interface Page {
  readonly status: number;
  readonly html: string;
  readonly location: string | null;
  readonly headers: Headers;
}

/** The value of the hidden input `name` in a page, or null. */
export function hiddenValue(html: string, name: string): string | null {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  return match ? match[1] : null;
}

/** The text of a page without tags, whitespace collapsed: what a reader sees. */
export function textOf(html: string): string {
  return html.replace(/<[^>]+>/g, " ").replace(/&amp;/g, "&").replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"').replace(/\s+/g, " ");
}

export class ConsoleBrowser {
  readonly cookies = new Map<string, string>();
  /** The CSRF token of the last page that carried one. */
  csrf: string | null = null;

  constructor(readonly f: HttpFixture) {}

  #cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { Cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ") };
  }

  #keep(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const [name, value] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)];
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) ||
        attributes.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || value === "") this.cookies.delete(name.trim());
      else this.cookies.set(name.trim(), value);
    }
  }

  async #page(response: Response): Promise<Page> {
    this.#keep(response);
    const html = await response.text();
    const token = hiddenValue(html, "csrf");
    if (token !== null) this.csrf = token;
    return {
      status: response.status,
      html,
      location: response.headers.get("Location"),
      headers: response.headers,
    };
  }

  async get(path: string): Promise<Page> {
    const response = await this.f.app.request(path, { headers: this.#cookieHeader() }, LOOPBACK);
    return await this.#page(response);
  }

  /** Posts a form; the CSRF token of the last page is added unless `csrf` is given (null: none). */
  async post(
    path: string,
    form: Record<string, string>,
    options: { csrf?: string | null } = {},
  ): Promise<Page> {
    const body = new URLSearchParams(form);
    const csrf = options.csrf === undefined ? this.csrf : options.csrf;
    if (csrf !== null && !body.has("csrf")) body.set("csrf", csrf);
    const response = await this.f.app.request(path, {
      method: "POST",
      headers: { ...this.#cookieHeader(), "Content-Type": "application/x-www-form-urlencoded" },
      body: body.toString(),
    }, LOOPBACK);
    return await this.#page(response);
  }

  /** Posts a multipart form with one file, as a browser's file input sends it. */
  async postFile(
    path: string,
    form: Record<string, string>,
    file: { field: string; name: string; content: string } | null,
  ): Promise<Page> {
    const body = new FormData();
    for (const [name, value] of Object.entries(form)) body.set(name, value);
    if (!body.has("csrf") && this.csrf !== null) body.set("csrf", this.csrf);
    if (file !== null) body.set(file.field, new File([file.content], file.name));
    const response = await this.f.app.request(path, {
      method: "POST",
      headers: this.#cookieHeader(),
      body,
    }, LOOPBACK);
    return await this.#page(response);
  }

  /** Signs in through the form with the operator's password and the current TOTP code. */
  async signIn(operator: TestOperator, options: { code?: string } = {}): Promise<Page> {
    await this.get("/console/sign-in");
    return await this.post("/console/sign-in", {
      email: operator.email,
      password: operator.password,
      code: options.code ?? totpCodeAt(operator.totpSecret, this.f.clock.now()),
    });
  }
}

/** An operator (not signed in yet) and a browser signed in as them on the console. */
export async function consoleAs(
  f: HttpFixture,
  input: { email: string; role: Role; companies?: string },
): Promise<{ operator: TestOperator; browser: ConsoleBrowser }> {
  const operator = await makeOperator(f.deps, { ...input, signIn: false }, f.clock.now());
  const browser = new ConsoleBrowser(f);
  const signedIn = await browser.signIn(operator);
  if (signedIn.status !== 303) {
    throw new Error(`console sign-in of ${input.email} answered ${signedIn.status}`);
  }
  // Another sign-in in the same 30 s would replay this code: move past its step.
  f.clock.advance(30_000);
  return { operator, browser };
}

/** Counts rows of a table in one environment's database. */
export async function countRows(
  f: HttpFixture,
  environment: "test" | "live",
  sql: string,
  args: (string | number)[] = [],
): Promise<number> {
  const { rows } = await f.deps.databases[environment].readClient.execute({ sql, args });
  return Number(rows[0].n);
}

/** A Surface B call with a line key of the fixture. */
export function v1Call(f: HttpFixture, key: string, method: string, path: string, body?: unknown) {
  return f.app.request(path, {
    method,
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Credits a line of the test environment with a received wire. */
export async function fundLine(
  f: HttpFixture,
  line: { companyId: string; lineId: string },
  cents: number,
): Promise<void> {
  const funded = await f.deps.databases.test.writer.write((tx) =>
    addFunds(
      tx,
      {
        ...line,
        paymentMethod: "WireTransfer",
        amountCents: cents,
        description: "console test funding",
        largeDisbursement: false,
        requestFingerprint: crypto.randomUUID(),
      },
      "test",
      f.clock.now(),
    )
  );
  if (!funded.ok) throw new Error(funded.message);
}

/** A /v1 disbursement of one payee (created, not yet offered); its payout's id. */
export async function createPayout(
  f: HttpFixture,
  input: {
    key: string;
    payeeId: string;
    email: string;
    name?: string;
    claimId: string;
    amount: number;
  },
): Promise<{ disbursementId: string; payoutId: string }> {
  const payee = await v1Call(f, input.key, "POST", "/v1/payees", {
    id: input.payeeId,
    email: input.email,
    name: input.name ?? "Pat Doe",
  });
  if (payee.status !== 201 && payee.status !== 200) {
    throw new Error(`payee: ${payee.status} ${await payee.text()}`);
  }
  const created = await v1Call(f, input.key, "POST", "/v1/disbursements", {
    amount: input.amount,
    claim_id: input.claimId,
    payee: { id: input.payeeId },
    modalities: ["ach", "check"],
  });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${await created.text()}`);
  const { id } = await created.json() as { id: string };
  const { rows } = await f.deps.databases.test.readClient.execute({
    sql:
      "SELECT p.id FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id WHERE d.external_uuid = ?",
    args: [id],
  });
  return { disbursementId: id, payoutId: String(rows[0].id) };
}

/** The balances of a test line, in cents, by account. */
export async function lineBalances(
  f: HttpFixture,
  lineId: string,
): Promise<Record<string, number>> {
  const { rows } = await f.deps.databases.test.readClient.execute({
    sql: "SELECT code, balance_cents FROM ledger_accounts WHERE line_id = ?",
    args: [lineId],
  });
  return Object.fromEntries(rows.map((row) => [String(row.code), Number(row.balance_cents)]));
}

/** RFC 4180 rows of a CSV text (quoted cells with doubled quotes). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      row.push(cell);
      cell = "";
    } else if (ch === "\r" && text[i + 1] === "\n") {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
      i++;
    } else cell += ch;
  }
  return rows;
}

/** Acme's test `auto` line funded with $5,000.00, and Rita Rivers's $1,250.00 payout (CLM-1) on it. */
export async function acmeWithRita(f: HttpFixture): Promise<{
  acme: { companyId: string; lineId: string };
  rita: Awaited<ReturnType<typeof createPayout>>;
}> {
  const acme = { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId };
  await fundLine(f, acme, 500_000);
  const rita = await createPayout(f, {
    key: f.cast.acmeAutoKeyTest,
    payeeId: "rita",
    email: "rita@example.test",
    name: "Rita Rivers",
    claimId: "CLM-1",
    amount: 1250,
  });
  return { acme, rita };
}
