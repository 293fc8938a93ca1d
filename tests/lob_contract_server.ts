/**
 * A stand-in for Lob's Print & Mail API, written from its published reference (docs.lob.com:
 * Checks, Idempotent Requests, Errors, Webhooks) and the official SDK's types
 * (@lob/lob-typescript-sdk: CheckEditable, Check, TrackingEventNormal, MailType): HTTP Basic with
 * the secret key as user, POST /v1/checks (its required fields checked, `Idempotency-Key`
 * answering the first check again), GET /v1/checks with `metadata[…]` filters, GET and DELETE
 * /v1/checks/{id}, errors as `{error: {message, status_code, code}}`. A cancel (DELETE) succeeds
 * only before the check's `send_date` ("Completely removes a check from production. This can only
 * be done if the check has a send_date and the send_date has not yet passed"); after it, the
 * default error answers (422 here). With deliverability strictness on, a create to an address the
 * tests marked undeliverable is refused 422 `failed_deliverability_strictness`. Tests add tracking
 * events, pass a check's send date, make the server fail or stall, and sign webhooks as Lob does
 * (`Lob-Signature`: hex HMAC-SHA256 of `<Lob-Signature-Timestamp>.<body>`).
 */
import { createHmac } from "node:crypto";

export const LOB_TEST_KEY = "test_0123456789abcdef0123456789abcdef";
export const LOB_LIVE_KEY = "live_0123456789abcdef0123456789abcdef";
export const LOB_WEBHOOK_SECRET = "lob-webhook-secret-0123456789";
export const LOB_BANK_ACCOUNT = "bank_8cad8df5354d33f";
export const LOB_FROM_ADDRESS = "adr_210a8d4b0b76d77b";

const MAIL_TYPES = ["usps_first_class", "usps_standard"];
const EXTRA_SERVICES = ["certified", "certified_return_receipt", "registered"];

export interface StoredCheck {
  readonly id: string;
  readonly body: Record<string, unknown>;
  readonly trackingEvents: { id: string; name: string; time: string; type: "normal" }[];
  deleted: boolean;
  /** When Lob sends it to production (real time): a cancel is refused from then on. */
  sendDate: number;
}

/** A check is sent to production this long after it is created, unless a test says otherwise. */
export const LOB_SEND_DELAY_MS = 3_600_000;

export interface LobContractServer {
  readonly baseUrl: string;
  readonly checks: Map<string, StoredCheck>;
  /** Bodies of every create received, in order (replays included). */
  readonly creates: { idempotencyKey: string | null; body: Record<string, unknown> }[];
  /** The next `count` calls answer `status` (5xx, 429), or stall past any timeout (`"stall"`). */
  failNext(status: number | "stall", count?: number): void;
  /** The next create is made, then its answer stalls past any timeout (a crash after Lob acted). */
  loseNextCreateAnswer(): void;
  /** Deletes answered to each DELETE, in order (status and body). */
  readonly cancels: { lobCheckId: string; status: number }[];
  /** ZIP codes whose addresses Lob finds undeliverable (creates to them are refused). */
  readonly undeliverableZips: Set<string>;
  /** The check's send date passes: it is in production and can no longer be canceled. */
  passSendDate(lobCheckId: string): void;
  /** The next DELETE is made, then its answer stalls past any timeout. */
  loseNextCancelAnswer(): void;
  /** Adds a tracking event to a check ("In Transit", "Returned to Sender", …). */
  track(lobCheckId: string, name: string, at: number): void;
  /** A webhook of `type` about a check, signed as Lob signs it (or with `secret`). */
  webhook(
    type: string,
    lobCheckId: string,
    options?: { at?: number; secret?: string; eventId?: string; signedAt?: number },
  ): { headers: Record<string, string>; body: string };
  close(): Promise<void>;
}

function error(status: number, message: string, code = "invalid"): Response {
  return Response.json({ error: { message, status_code: status, code } }, { status });
}

function checkObject(check: StoredCheck): Record<string, unknown> {
  const b = check.body;
  return {
    id: check.id,
    object: "check",
    description: b.description ?? null,
    to: b.to,
    from: b.from,
    bank_account: b.bank_account,
    amount: b.amount,
    check_number: b.check_number,
    memo: b.memo ?? null,
    mail_type: b.mail_type ?? "usps_first_class",
    extra_service: b.extra_service ?? null,
    metadata: b.metadata ?? {},
    tracking_events: check.trackingEvents,
    deleted: check.deleted,
    send_date: new Date(check.sendDate).toISOString(),
    date_created: "2026-01-05T15:00:00.000Z",
  };
}

/** Why a create body is refused, or null (the required fields and enums of CheckEditable). */
function invalid(body: Record<string, unknown>): string | null {
  const to = body.to as Record<string, unknown> | undefined;
  if (!to || typeof to !== "object") return "to is required";
  for (const field of ["name", "address_line1", "address_city", "address_state", "address_zip"]) {
    if (typeof to[field] !== "string" || to[field] === "") return `to.${field} is required`;
  }
  if (!/^\d{5}(-\d{4})?$/.test(String(to.address_zip))) return "to.address_zip must be a ZIP";
  if (!/^[A-Z]{2}$/.test(String(to.address_state))) return "to.address_state must be a state code";
  if (body.from !== LOB_FROM_ADDRESS) return "from must be an address id of this account";
  if (body.bank_account !== LOB_BANK_ACCOUNT) return "bank_account must be a verified bank account";
  const amount = body.amount;
  if (typeof amount !== "number" || amount <= 0 || amount > 999999.99) {
    return "amount must be a number up to 999999.99";
  }
  if (Math.round(amount * 100) / 100 !== amount) return "amount has at most two decimals";
  if (body.check_number !== undefined && !Number.isInteger(body.check_number)) {
    return "check_number must be an integer";
  }
  if (typeof body.memo === "string" && body.memo.length > 40) return "memo: at most 40 characters";
  if (body.mail_type !== undefined && !MAIL_TYPES.includes(String(body.mail_type))) {
    return `mail_type must be one of ${MAIL_TYPES.join(", ")}`;
  }
  if (body.extra_service !== undefined && !EXTRA_SERVICES.includes(String(body.extra_service))) {
    return `extra_service must be one of ${EXTRA_SERVICES.join(", ")}`;
  }
  const metadata = (body.metadata ?? {}) as Record<string, unknown>;
  if (Object.keys(metadata).length > 20) return "metadata: at most 20 keys";
  return null;
}

/** Starts the server on a free loopback port, accepting `apiKey`. */
export function startLobContractServer(apiKey = LOB_TEST_KEY): LobContractServer {
  const checks = new Map<string, StoredCheck>();
  const byKey = new Map<string, string>();
  const creates: LobContractServer["creates"] = [];
  const cancels: LobContractServer["cancels"] = [];
  const undeliverableZips = new Set<string>();
  let loseCancelAnswer = false;
  const failures: (number | "stall")[] = [];
  let sequence = 0;
  let loseCreateAnswer = false;
  const stalls: (() => void)[] = [];
  const stall = () => new Promise<void>((resolve) => stalls.push(resolve));

  const handle = async (request: Request): Promise<Response> => {
    const failure = failures.shift();
    if (failure === "stall") {
      await stall();
      return error(504, "stalled");
    }
    if (failure !== undefined) return error(failure, "Lob is unavailable");
    if (request.headers.get("authorization") !== `Basic ${btoa(`${apiKey}:`)}`) {
      return error(
        401,
        "Your API key is not valid. Please sign up on lob.com to get a valid api key.",
        "unauthorized",
      );
    }
    const url = new URL(request.url);
    const path = url.pathname;
    if (request.method === "POST" && path === "/v1/checks") {
      const body = await request.json() as Record<string, unknown>;
      const key = request.headers.get("idempotency-key");
      creates.push({ idempotencyKey: key, body });
      if (key !== null && byKey.has(key)) {
        return Response.json(checkObject(checks.get(byKey.get(key)!)!));
      }
      const problem = invalid(body);
      if (problem) return error(422, problem);
      const zip = String((body.to as Record<string, unknown>).address_zip);
      if (undeliverableZips.has(zip)) {
        return error(
          422,
          "The address you've provided is undeliverable",
          "failed_deliverability_strictness",
        );
      }
      const id = `chk_${(++sequence).toString(16).padStart(14, "0")}`;
      const check: StoredCheck = {
        id,
        body,
        trackingEvents: [],
        deleted: false,
        sendDate: Date.now() + LOB_SEND_DELAY_MS,
      };
      checks.set(id, check);
      if (key !== null) byKey.set(key, id);
      if (loseCreateAnswer) {
        loseCreateAnswer = false;
        await stall();
      }
      return Response.json(checkObject(check));
    }
    if (request.method === "GET" && path === "/v1/checks") {
      const filters = [...url.searchParams].flatMap(([name, value]) => {
        const match = /^metadata\[(.+)\]$/.exec(name);
        return match ? [[match[1], value] as const] : [];
      });
      const limit = Number(url.searchParams.get("limit") ?? "10");
      const data = [...checks.values()]
        .filter((check) =>
          filters.every(([name, value]) =>
            (check.body.metadata as Record<string, string> | undefined)?.[name] === value
          )
        )
        .slice(0, limit)
        .map(checkObject);
      return Response.json({ object: "list", data, count: data.length });
    }
    const one = /^\/v1\/checks\/(chk_[0-9a-f]+)$/.exec(path);
    if (one) {
      const check = checks.get(one[1]);
      if (!check) return error(404, "check not found", "not_found");
      if (request.method === "GET") return Response.json(checkObject(check));
      if (request.method === "DELETE") {
        if (!check.deleted && Date.now() >= check.sendDate) {
          cancels.push({ lobCheckId: check.id, status: 422 });
          return error(
            422,
            `${check.id} cannot be canceled: its send_date has passed and it is in production`,
          );
        }
        check.deleted = true;
        cancels.push({ lobCheckId: check.id, status: 200 });
        if (loseCancelAnswer) {
          loseCancelAnswer = false;
          await stall();
        }
        return Response.json({ id: check.id, deleted: true });
      }
    }
    return error(404, `no route ${request.method} ${path}`, "not_found");
  };

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handle);
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}`,
    checks,
    creates,
    cancels,
    undeliverableZips,
    passSendDate(lobCheckId) {
      checks.get(lobCheckId)!.sendDate = Date.now() - 1;
    },
    loseNextCancelAnswer() {
      loseCancelAnswer = true;
    },
    failNext(status, count = 1) {
      for (let i = 0; i < count; i++) failures.push(status);
    },
    loseNextCreateAnswer() {
      loseCreateAnswer = true;
    },
    track(lobCheckId, name, at) {
      const check = checks.get(lobCheckId)!;
      check.trackingEvents.push({
        id: `evnt_${check.trackingEvents.length + 1}`,
        name,
        time: new Date(at).toISOString(),
        type: "normal",
      });
    },
    webhook(type, lobCheckId, options = {}) {
      const check = checks.get(lobCheckId)!;
      const body = JSON.stringify({
        id: options.eventId ?? `evt_${type.replace(/\W/g, "_")}_${lobCheckId}`,
        object: "event",
        event_type: { id: type, resource: "checks", object: "event_type" },
        reference_id: lobCheckId,
        body: checkObject(check),
        date_created: new Date(options.at ?? Date.now()).toISOString(),
      });
      const timestamp = String(options.signedAt ?? Date.now());
      const signature = createHmac("sha256", options.secret ?? LOB_WEBHOOK_SECRET)
        .update(`${timestamp}.${body}`).digest("hex");
      return {
        headers: {
          "Content-Type": "application/json",
          "Lob-Signature": signature,
          "Lob-Signature-Timestamp": timestamp,
        },
        body,
      };
    },
    async close() {
      for (const release of stalls.splice(0)) release();
      await server.shutdown();
    },
  };
}
