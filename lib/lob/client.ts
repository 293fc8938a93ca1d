/**
 * Lob's Print & Mail API for checks, over plain fetch, for one company's settings: create a check
 * under an idempotency key, find the check we created for one of ours (by its metadata), read
 * one, cancel one before its send date. Every call is made outside write units. A refusal Lob answered is a value; no answer (a
 * timeout, a 5xx, a 429) throws, and the caller asks again under the same key.
 */
import type { LobSettings } from "./settings.ts";
import type { LobPostage } from "./rules.ts";
import { untilDurable } from "../platform/durability.ts";

/** A call to Lob unanswered after this long counts as unanswered. */
export const LOB_TIMEOUT_MS = 15_000;
/** Lob prints at most this many characters of a memo. */
export const LOB_MEMO_LENGTH_MAX = 40;

/** One of Lob's tracking events of a check, as it reports them. */
export interface LobTrackingEvent {
  readonly id: string;
  readonly name: string;
  readonly time: string | null;
}

/** A check as Lob reports it (the fields we read). */
export interface LobCheck {
  readonly id: string;
  readonly checkNumber: number | null;
  readonly deleted: boolean;
  readonly metadata: Readonly<Record<string, string>>;
  readonly trackingEvents: readonly LobTrackingEvent[];
}

/** What we ask Lob to mail: one check of our register. */
export interface LobCheckRequest {
  readonly checkId: string;
  readonly payoutId: string;
  readonly companyId: string;
  readonly checkNumber: number;
  readonly amountCents: number;
  readonly memo: string | null;
  readonly payeeName: string;
  readonly address: {
    readonly line1: string;
    readonly line2: string | null;
    readonly city: string;
    readonly state: string;
    readonly zip: string;
  };
  readonly postage: LobPostage;
}

/** Lob's refusal of a call: its status, its error `code` (null when it gave none) and message. */
export interface LobRefusal {
  readonly kind: "refused";
  readonly status: number;
  readonly code: string | null;
  readonly message: string;
}

export type CreateAnswer = { readonly kind: "created"; readonly check: LobCheck } | LobRefusal;

/** A cancel Lob made (the check is out of production), or its refusal (past its send date). */
export type CancelAnswer = { readonly kind: "canceled" } | LobRefusal;

function refusalOf(status: number, body: Record<string, unknown>): LobRefusal {
  const error = (body.error ?? {}) as { message?: unknown; code?: unknown };
  return {
    kind: "refused",
    status,
    code: typeof error.code === "string" ? error.code : null,
    message: typeof error.message === "string" ? error.message : `Lob answered ${status}`,
  };
}

/** Dollars as Lob takes them, from integer cents (never through a float's arithmetic). */
export function lobAmount(cents: number): number {
  return Number(`${Math.trunc(cents / 100)}.${String(cents % 100).padStart(2, "0")}`);
}

function checkOf(body: Record<string, unknown>): LobCheck {
  const events = Array.isArray(body.tracking_events) ? body.tracking_events : [];
  return {
    id: String(body.id),
    checkNumber: typeof body.check_number === "number" ? body.check_number : null,
    deleted: body.deleted === true,
    metadata: (body.metadata ?? {}) as Record<string, string>,
    trackingEvents: events.map((event: Record<string, unknown>) => ({
      id: String(event.id),
      name: String(event.name),
      time: typeof event.time === "string" ? event.time : null,
    })),
  };
}

/** The body of a check create, in Lob's words. */
export function lobCheckBody(
  settings: Pick<LobSettings, "bankAccount" | "fromAddress">,
  request: LobCheckRequest,
): Record<string, unknown> {
  return {
    description: `check ${request.checkNumber}`,
    to: {
      name: request.payeeName.slice(0, 40),
      address_line1: request.address.line1,
      ...(request.address.line2 ? { address_line2: request.address.line2 } : {}),
      address_city: request.address.city,
      address_state: request.address.state,
      address_zip: request.address.zip,
      address_country: "US",
    },
    from: settings.fromAddress,
    bank_account: settings.bankAccount,
    amount: lobAmount(request.amountCents),
    check_number: request.checkNumber,
    ...(request.memo ? { memo: request.memo.slice(0, LOB_MEMO_LENGTH_MAX) } : {}),
    mail_type: request.postage.mailType,
    ...(request.postage.extraService ? { extra_service: request.postage.extraService } : {}),
    use_type: "operational",
    metadata: {
      check_id: request.checkId,
      payout_id: request.payoutId,
      company_id: request.companyId,
    },
  };
}

export class LobClient {
  readonly #settings: LobSettings;
  readonly #timeoutMs: number;

  constructor(settings: LobSettings, timeoutMs = LOB_TIMEOUT_MS) {
    this.#settings = settings;
    this.#timeoutMs = timeoutMs;
  }

  async #call(
    method: string,
    path: string,
    options: { body?: unknown; idempotencyKey?: string } = {},
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    await untilDurable();
    const response = await fetch(`${this.#settings.baseUrl}${path}`, {
      method,
      headers: {
        Authorization: `Basic ${btoa(`${this.#settings.apiKey}:`)}`,
        Accept: "application/json",
        ...(options.body === undefined ? {} : { "Content-Type": "application/json" }),
        ...(options.idempotencyKey ? { "Idempotency-Key": options.idempotencyKey } : {}),
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(this.#timeoutMs),
    });
    const text = await response.text();
    // A 5xx, a 429 or a 408 is no answer: whether Lob acted is unknown.
    if (response.status >= 500 || response.status === 429 || response.status === 408) {
      throw new Error(`Lob answered ${response.status} to ${method} ${path}`);
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new Error(`Lob answered ${response.status} with a body that is not JSON`);
    }
    return { status: response.status, body };
  }

  /** Creates a check; the same `idempotencyKey` again answers the same check. */
  async createCheck(request: LobCheckRequest, idempotencyKey: string): Promise<CreateAnswer> {
    const { status, body } = await this.#call("POST", "/v1/checks", {
      body: lobCheckBody(this.#settings, request),
      idempotencyKey,
    });
    if (status >= 200 && status < 300) return { kind: "created", check: checkOf(body) };
    return refusalOf(status, body);
  }

  /**
   * Cancels a check (`DELETE /v1/checks/{id}`), which Lob does only before its send date. A key
   * Lob does not take (401, 403) or a check it does not know (404) throws: that is no answer
   * about the check.
   */
  async cancelCheck(lobCheckId: string): Promise<CancelAnswer> {
    const path = `/v1/checks/${encodeURIComponent(lobCheckId)}`;
    const { status, body } = await this.#call("DELETE", path);
    if (status === 200 && body.deleted === true) return { kind: "canceled" };
    if ([401, 403, 404].includes(status) || status < 400) {
      throw new Error(`Lob answered ${status} to DELETE ${path}`);
    }
    return refusalOf(status, body);
  }

  /** The check Lob mails for one of ours (by the metadata we gave it), or null. */
  async findCheck(checkId: string): Promise<LobCheck | null> {
    const query = new URLSearchParams({ limit: "2", "metadata[check_id]": checkId });
    const { status, body } = await this.#call("GET", `/v1/checks?${query}`);
    if (status !== 200) throw new Error(`Lob answered ${status} to the list of checks`);
    const data = Array.isArray(body.data) ? body.data as Record<string, unknown>[] : [];
    return data[0] ? checkOf(data[0]) : null;
  }

  /** One check by Lob's id. */
  async check(lobCheckId: string): Promise<LobCheck> {
    const { status, body } = await this.#call(
      "GET",
      `/v1/checks/${encodeURIComponent(lobCheckId)}`,
    );
    if (status !== 200) throw new Error(`Lob answered ${status} to check ${lobCheckId}`);
    return checkOf(body);
  }
}
