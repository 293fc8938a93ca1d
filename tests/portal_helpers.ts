/**
 * Portal test helpers: a browser stand-in over `app.request` that keeps cookies and reads the CSRF
 * token off each page, the sandbox inbox as the payee's mailbox, and payees of both surfaces.
 */
import assert from "node:assert/strict";
import { api, payee } from "./api_helpers.ts";
import { fundAcmeAuto, type HttpFixture } from "./http_fixture.ts";

import type { InboxMessage } from "../routes/sandbox.tsx";

/** An ACH choice with the sandbox account that settles (contract §10). */
export const settlingAchForm = {
  method: "ach",
  routing_number: "011000015",
  account_number: "000123456789",
  account_number_confirm: "000123456789",
  account_type: "checking",
  typed_name: "Pat Doe",
  consent: "yes",
};

export async function inbox(f: HttpFixture): Promise<InboxMessage[]> {
  const listed = await (await f.app.request("/sandbox/inbox.json")).json() as {
    data: InboxMessage[];
  };
  return listed.data;
}

/** The newest message to `to` matching `pattern` (subject or body). */
export async function lastMessage(
  f: HttpFixture,
  to: string,
  pattern: RegExp = /./,
): Promise<InboxMessage> {
  const found = (await inbox(f)).find((m) =>
    m.to === to && (pattern.test(m.subject ?? "") || pattern.test(m.body))
  );
  assert.ok(found, `no message to ${to} matching ${pattern}`);
  return found;
}

/** The path of a portal URL from a message (`/portal/<token>`). */
export const pathOf = (url: string) => new URL(url).pathname;

export class PortalBrowser {
  readonly #cookies = new Map<string, string>();
  #csrf = "";
  lastHtml = "";

  /** `headers` go with every request, like a browser's Accept-Language. */
  constructor(readonly f: HttpFixture, readonly headers: Record<string, string> = {}) {}

  /** Keeps a cookie as if a page had set it. */
  setCookie(name: string, value: string) {
    this.#cookies.set(name, value);
  }

  async get(path: string): Promise<Response> {
    return this.#keep(await this.f.app.request(path, { headers: this.#headers() }), path);
  }

  /** Posts a form; `csrf` is taken from the last page unless given. */
  async post(path: string, form: Record<string, string>, csrf?: string): Promise<Response> {
    const body = new URLSearchParams({ csrf: csrf ?? this.csrf(), ...form });
    return this.#keep(
      await this.f.app.request(path, {
        method: "POST",
        headers: { ...this.#headers(), "Content-Type": "application/x-www-form-urlencoded" },
        body: body.toString(),
      }),
      path,
    );
  }

  /** The cookies the pages set, as name and value (to hand a session to a real browser). */
  cookies(): [string, string][] {
    return [...this.#cookies];
  }

  /** The CSRF token of the latest page that had a form with one. */
  csrf(): string {
    return this.#csrf;
  }

  #headers(): Record<string, string> {
    const cookie = [...this.#cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    return cookie ? { ...this.headers, Cookie: cookie } : { ...this.headers };
  }

  async #keep(response: Response, _path: string): Promise<Response> {
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(";");
      const [name, ...value] = pair.split("=");
      this.#cookies.set(name.trim(), value.join("="));
    }
    if (!response.headers.get("Content-Type")?.includes("text/html")) return response;
    const text = await response.text();
    {
      this.lastHtml = text;
      this.#csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? this.#csrf;
    }
    return new Response(text, { status: response.status, headers: response.headers });
  }
}

/** Creates a one-payee Surface A disbursement and returns the payee's offer link path. */
export async function offeredPayee(
  f: HttpFixture,
  uuid: string,
  extra: Record<string, unknown> = {},
): Promise<{ disbursementUuid: string; email: string; linkPath: string }> {
  await fundAcmeAuto(f, 100_000_00);
  const disbursementUuid = `d-${uuid}`;
  const created = await api(f, "POST", "/api/disbursements", {
    disbursement_uuid: disbursementUuid,
    large_disbursement: false,
    payees: [payee(uuid, 250, extra)],
  });
  assert.equal(created.status, 201, await created.text());
  await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 1 });
  const email = `${uuid}@example.test`;
  const message = await lastMessage(f, email);
  return { disbursementUuid, email, linkPath: pathOf(message.links[0]) };
}

/** Asks for a code and enters it: the browser is then verified for this link. */
export async function verify(browser: PortalBrowser, linkPath: string, to: string) {
  await browser.get(linkPath);
  const before = new Set((await inbox(browser.f)).map((m) => m.id));
  assert.equal((await browser.post(`${linkPath}/code`, {})).status, 303);
  // Messages of one fake-clock instant sort by id: the new one is the one not seen before.
  const message = (await inbox(browser.f)).find((m) =>
    m.to === to && m.code !== undefined && !before.has(m.id)
  );
  assert.ok(message, `no new code sent to ${to}`);
  const code = message.code!;
  await browser.get(linkPath);
  const verified = await browser.post(`${linkPath}/verify`, { code });
  assert.equal(verified.status, 303, browser.lastHtml);
}

/** A Surface B request with Acme's `auto` test key. */
export function v1(f: HttpFixture, method: string, path: string, body?: unknown) {
  return f.app.request(path, {
    method,
    headers: {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Creates the /v1 payee and a $75.00 disbursement to it, then lets the offer go out. */
export async function v1Disbursement(f: HttpFixture, payee: Record<string, unknown>) {
  await fundAcmeAuto(f, 100_000_00);
  assert.equal((await v1(f, "POST", "/v1/payees", payee)).status, 201);
  const created = await v1(f, "POST", "/v1/disbursements", {
    amount: 75,
    claim_id: "CLM-ES",
    payee: { id: payee.id },
    modalities: ["ach", "paypal"],
  });
  const body = await created.json() as { id: string; payee_url: string };
  assert.equal(created.status, 201, JSON.stringify(body));
  await v1(f, "POST", "/v1/sandbox/clock/advance", { seconds: 1 });
  return body;
}
