/**
 * The sandbox's Increase: the part of Increase's API the instant deposit adapter uses (card tokens
 * and their capabilities, $0 card validations, card push transfers, the routing number lookup, Real-Time
 * Payments transfers, each creation under Idempotency-Key), answered in process through the
 * client's transport, so the sandbox pays instant deposit through the same adapter as live with
 * no server to run. Its state is the test database's (lib/instant/simulator_store.ts): a restart
 * keeps it, and a repeated key gets the first object. Its outcomes are the sandbox's magic values:
 *
 * | card or routing number | what the simulator answers                                       |
 * | ---------------------- | ---------------------------------------------------------------- |
 * | 4000000000000101       | capabilities: no route supports a domestic push                  |
 * | 4000000000000002       | the $0 validation is declined (do_not_honor)                      |
 * | routing 091000019      | the routing lookup: Real-Time Payments not supported; a transfer |
 * |                        | to it is refused                                                 |
 * | any other              | validated, and every transfer completes 5 s later on the sandbox |
 * |                        | clock, with a signed `*.updated` event sent to the webhook       |
 *
 * Its hosted card field plays the tokenization provider's page: a developer types a test card,
 * its expiry and CVV there, as Increase's vault takes them (`primary_account_number`,
 * `expiration_month`, `expiration_year`, `card_verification_value2`); the vault keeps which test
 * card it behaves as and its expiry (never the number typed, never the CVV) and hands the portal
 * back only a token, whose Card Token reports that expiry.
 */
import type { Database } from "../../db/client.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { WriteTx } from "../../db/writer.ts";
import { randomBase62 } from "../platform/keys.ts";
import { passesLuhn } from "../portal/method_details.ts";
import { sandboxTestDetails, TEST_PAYEE_CARD_TOKENS } from "../rails/sandbox.ts";
import type { IncreaseTransport } from "./client.ts";
import type { IncreaseSettings } from "./settings.ts";
import {
  findIdempotentCreation,
  findSimulatedObject,
  insertIdempotentCreation,
  insertSimulatedCard,
  insertSimulatedObject,
  type SimulatedCard,
  simulatedCard,
  type SimulatedObject,
  updateSimulatedObject,
} from "./simulator_store.ts";

/**
 * The settings a test company without its own Increase settings is paid with: the simulator's
 * key and webhook secret, and its hosted card field, a path of this service itself.
 */
export const SIMULATOR_SETTINGS: IncreaseSettings = {
  apiKey: "sandbox_increase_simulator",
  baseUrl: "https://increase-simulator.sandbox.invalid",
  webhookSecret: "sandbox_increase_simulator_webhook_secret",
  accountId: "account_sandbox_simulator",
  sourceAccountNumberId: "account_number_sandbox_simulator",
  cardPageUrl: "/sandbox/increase/card",
  merchant: {
    name: "Sandbox Payer",
    namePrefix: "SBX",
    categoryCode: "6300",
    addressLine1: "1 Sandbox Way",
    city: "Austin",
    state: "TX",
    postalCode: "73301",
  },
};

/** How long after its creation, on the sandbox clock, a simulated transfer completes. */
export const SIMULATED_SETTLE_MS = 5_000;

/** The simulator's job: a transfer's status moves and its event is sent. */
export const INCREASE_SIMULATOR_JOBS = { settle: "increase_simulator.settle" } as const;

/** When the test payees' cards (known to the vault without being typed) expire. */
const TEST_PAYEE_CARD_EXPIRATION = "2030-12-31";

/** The test payees' cards, known to the vault without being typed. */
const TEST_PAYEE_CARDS: Readonly<Record<string, string>> = {
  [TEST_PAYEE_CARD_TOKENS.success]: sandboxTestDetails.cardSucceeds,
  [TEST_PAYEE_CARD_TOKENS.fail]: sandboxTestDetails.cardDeclined,
};

function refusal(status: number, type: string, detail: string): Response {
  return Response.json({ status, type, title: type.replaceAll("_", " "), detail }, { status });
}

/** The card a token stands for; a test payee's, never typed, counts as made `at`. */
async function cardOf(
  database: Database,
  tokenId: string,
  at: number,
): Promise<SimulatedCard | null> {
  const testPayeeCard = TEST_PAYEE_CARDS[tokenId];
  if (testPayeeCard) {
    return { cardNumber: testPayeeCard, expirationDate: TEST_PAYEE_CARD_EXPIRATION, createdAt: at };
  }
  return await simulatedCard(database.readClient, tokenId);
}

async function cardNumberOf(database: Database, tokenId: string): Promise<string | null> {
  return (await cardOf(database, tokenId, 0))?.cardNumber ?? null;
}

/** Whether the simulated banking network takes Real-Time Payments at this routing number. */
function takesRtp(routingNumber: string): boolean {
  return routingNumber !== sandboxTestDetails.rtpUnreachableRouting;
}

const newObjectId = (type: string) => `${type}_sbx_${randomBase62(20)}`;

/** What one creation makes of its parameters: an object, or Increase's refusal. */
type Creation = (
  params: Record<string, unknown>,
  made: { readonly companyId: string; readonly at: number; readonly cardNumber: string | null },
) => SimulatedObject | Response;

const validation: Creation = (params, { companyId, at, cardNumber }) => {
  if (cardNumber === null) {
    return refusal(400, "invalid_parameters_error", "card_token_id is not a card token");
  }
  const declined = cardNumber === sandboxTestDetails.cardDeclined;
  const id = newObjectId("outbound_card_validation");
  return {
    id,
    companyId,
    type: "card_validation",
    object: {
      id,
      card_token_id: params.card_token_id,
      status: declined ? "declined" : "complete",
      route: "visa",
      acceptance: declined
        ? null
        : { cardholder_full_name_result: "match", cardholder_postal_code_result: "match" },
      decline: declined ? { reason: "do_not_honor" } : null,
      cardholder_first_name: params.cardholder_first_name,
      cardholder_last_name: params.cardholder_last_name,
      cardholder_postal_code: params.cardholder_postal_code,
      created_at: new Date(at).toISOString(),
      type: "card_validation",
    },
  };
};

const push: Creation = (params, { companyId, at, cardNumber }) => {
  if (cardNumber === null) {
    return refusal(400, "invalid_parameters_error", "card_token_id is not a card token");
  }
  if (params.business_application_identifier !== "funds_disbursement") {
    return refusal(400, "invalid_parameters_error", "business_application_identifier");
  }
  const id = newObjectId("outbound_card_push_transfer");
  return {
    id,
    companyId,
    type: "card_push_transfer",
    object: {
      id,
      status: "pending_submission",
      route: "visa",
      card_token_id: params.card_token_id,
      presentment_amount: params.presentment_amount,
      recipient_name: params.recipient_name,
      decline: null,
      created_at: new Date(at).toISOString(),
      type: "card_push_transfer",
    },
  };
};

const rtpTransfer: Creation = (params, { companyId, at }) => {
  const amount = params.amount;
  if (typeof amount !== "number" || !Number.isInteger(amount) || amount <= 0) {
    return refusal(400, "invalid_parameters_error", "amount must be positive cents");
  }
  const routing = String(params.routing_number);
  if (!takesRtp(routing)) {
    return refusal(
      400,
      "invalid_parameters_error",
      `routing number ${routing} does not take Real-Time Payments transfers`,
    );
  }
  const id = newObjectId("real_time_payments_transfer");
  return {
    id,
    companyId,
    type: "real_time_payments_transfer",
    object: {
      id,
      status: "pending_submission",
      amount,
      account_number: String(params.account_number),
      routing_number: routing,
      creditor_name: String(params.creditor_name),
      unstructured_remittance_information: String(params.unstructured_remittance_information),
      rejection: null,
      created_at: new Date(at).toISOString(),
      type: "real_time_payments_transfer",
    },
  };
};

const CREATIONS: Readonly<Record<string, Creation>> = {
  "/card_validations": validation,
  "/card_push_transfers": push,
  "/real_time_payments_transfers": rtpTransfer,
};

const READS: Readonly<Record<string, string>> = {
  card_validations: "card_validation",
  card_push_transfers: "card_push_transfer",
  real_time_payments_transfers: "real_time_payments_transfer",
};

/** A creation in one write unit of the simulator's own: a repeated key answers the first object. */
function create(
  database: Database,
  request: { path: string; key: string | null; body: string; params: Record<string, unknown> },
  made: { companyId: string; at: number; cardNumber: string | null },
): Promise<Response> {
  const idempotencyKey = request.key === null ? null : `${request.path} ${request.key}`;
  return database.writer.write(async (tx: WriteTx) => {
    if (idempotencyKey !== null) {
      const first = await findIdempotentCreation(tx, idempotencyKey);
      if (first) {
        if (first.requestBody !== request.body) {
          return refusal(
            409,
            "idempotency_key_already_used_error",
            `key ${request.key} was used for another request`,
          );
        }
        return Response.json((await findSimulatedObject(tx, first.objectId))!.object);
      }
    }
    const object = CREATIONS[request.path](request.params, made);
    if (object instanceof Response) return object;
    await insertSimulatedObject(tx, object, made.at);
    if (idempotencyKey !== null) {
      await insertIdempotentCreation(
        tx,
        { key: idempotencyKey, requestBody: request.body, objectId: object.id },
        made.at,
      );
    }
    if (object.type !== "card_validation") {
      await scheduleJob(tx, {
        companyId: made.companyId,
        kind: INCREASE_SIMULATOR_JOBS.settle,
        subjectId: object.id,
        dueAt: made.at + SIMULATED_SETTLE_MS,
      }, made.at);
    }
    return Response.json(object.object);
  });
}

/**
 * The simulator as a client transport for one company: `at` is the company's sandbox time of the
 * call (a transfer made then completes SIMULATED_SETTLE_MS later on its clock).
 */
export function increaseSimulator(
  database: Database,
  companyId: string,
  at: number,
): IncreaseTransport {
  return async (request) => {
    if (request.headers.get("authorization") !== `Bearer ${SIMULATOR_SETTINGS.apiKey}`) {
      return refusal(401, "insufficient_permissions_error", "invalid API key");
    }
    const url = new URL(request.url);
    const path = url.pathname;
    if (request.method === "POST" && path in CREATIONS) {
      const body = await request.text();
      let params: Record<string, unknown>;
      try {
        params = JSON.parse(body);
      } catch {
        return refusal(400, "malformed_request_error", "the body is not JSON");
      }
      const tokenId = typeof params.card_token_id === "string" ? params.card_token_id : null;
      return await create(
        database,
        { path, key: request.headers.get("idempotency-key"), body, params },
        { companyId, at, cardNumber: tokenId ? await cardNumberOf(database, tokenId) : null },
      );
    }
    if (request.method !== "GET") return refusal(404, "not_found_error", `no route ${path}`);
    const cardToken = /^\/card_tokens\/([^/]+)$/.exec(path);
    if (cardToken) {
      const id = decodeURIComponent(cardToken[1]);
      const card = await cardOf(database, id, at);
      if (card === null) return refusal(404, "object_not_found_error", "no such card token");
      // The token is the test card the typed one behaves as: its digits are what Increase shows.
      const { cardNumber } = card;
      return Response.json({
        id,
        created_at: new Date(card.createdAt).toISOString(),
        expiration_date: card.expirationDate,
        last4: cardNumber.slice(-4),
        length: cardNumber.length,
        prefix: cardNumber.slice(0, 8),
        type: "card_token",
      });
    }
    const capabilities = /^\/card_tokens\/([^/]+)\/capabilities$/.exec(path);
    if (capabilities) {
      const cardNumber = await cardNumberOf(database, decodeURIComponent(capabilities[1]));
      if (cardNumber === null) {
        return refusal(404, "object_not_found_error", "no such card token");
      }
      const domestic = cardNumber === sandboxTestDetails.cardNotPushable
        ? "not_supported"
        : "supported";
      return Response.json({
        routes: [
          {
            route: "visa",
            domestic_push_transfers: domestic,
            cross_border_push_transfers: "not_supported",
          },
        ],
        type: "card_token_capabilities",
      });
    }
    if (path === "/routing_numbers") {
      const routing = url.searchParams.get("routing_number") ?? "";
      const supported = (yes: boolean) => yes ? "supported" : "not_supported";
      return Response.json({
        data: /^\d{9}$/.test(routing)
          ? [{
            name: `Sandbox bank ${routing}`,
            routing_number: routing,
            ach_transfers: "supported",
            fednow_transfers: "not_supported",
            real_time_payments_transfers: supported(takesRtp(routing)),
            wire_transfers: "supported",
            type: "routing_number",
          }]
          : [],
        next_cursor: null,
      });
    }
    const read = /^\/([a-z_]+)\/([^/]+)$/.exec(path);
    const found = read && read[1] in READS
      ? await findSimulatedObject(database.readClient, decodeURIComponent(read[2]))
      : null;
    return found && found.type === READS[read![1]] && found.companyId === companyId
      ? Response.json(found.object)
      : refusal(404, "object_not_found_error", `no object at ${path}`);
  };
}

/**
 * A transfer's time came on the sandbox clock: it completes. Returns the event the simulator
 * sends about it, or null when it had moved already (the job ran before).
 */
export async function settleSimulatedTransfer(
  tx: WriteTx,
  id: string,
  at: number,
): Promise<{ companyId: string; body: string } | null> {
  const found = await findSimulatedObject(tx, id);
  if (!found || found.object.status !== "pending_submission") return null;
  await updateSimulatedObject(tx, id, { ...found.object, status: "complete" });
  return {
    companyId: found.companyId,
    body: JSON.stringify({
      id: `event_sbx_${randomBase62(20)}`,
      associated_object_id: id,
      associated_object_type: found.type,
      category: `${found.type}.updated`,
      created_at: new Date(at).toISOString(),
      type: "event",
    }),
  };
}

/**
 * The hosted card field's refusals, each naming its field: a number failing its check digit, an
 * expiry that is not a month (MM/YY), a card expired before this month, a CVV not of 3 or 4
 * digits (Increase's vault: `card_verification_value2` "must be 3 or 4 digits").
 */
export type HostedCardRefusal =
  | "card_number_invalid"
  | "card_expiry_invalid"
  | "card_expired"
  | "card_cvv_invalid";

/** What a payee types at the hosted card field. */
export interface TypedCard {
  readonly pan: string;
  /** MM/YY or MM/YYYY, as printed on the card. */
  readonly expiry: string;
  readonly cvv: string;
}

/** A refusal of the hosted card field: its code, the field at fault and why. */
export interface HostedCardProblem {
  readonly code: HostedCardRefusal;
  readonly field: "pan" | "exp" | "cvv";
  readonly message: string;
}

/**
 * The typed card checked as the vault checks it, pure: its digits, and the last day of its expiry
 * month (Increase's `expiration_date`), or the first problem in the order of the fields.
 */
export function checkTypedCard(
  typed: TypedCard,
  now: number,
): { ok: true; cardNumber: string; expirationDate: string } | ({ ok: false } & HostedCardProblem) {
  const cardNumber = typed.pan.replace(/[\s-]/g, "");
  if (!passesLuhn(cardNumber)) {
    return {
      ok: false,
      code: "card_number_invalid",
      field: "pan",
      message: "the typed card number fails its check digit (Luhn)",
    };
  }
  const expiry = /^(\d{1,2})\s*\/\s*(\d{2}|\d{4})$/.exec(typed.expiry.trim());
  const month = expiry ? Number(expiry[1]) : 0;
  if (!expiry || month < 1 || month > 12) {
    return {
      ok: false,
      code: "card_expiry_invalid",
      field: "exp",
      message: `the expiry must be a month as MM/YY, got ${JSON.stringify(typed.expiry)}`,
    };
  }
  const year = expiry[2].length === 2 ? 2000 + Number(expiry[2]) : Number(expiry[2]);
  // A card is good through the last day of its expiry month.
  const lastDay = Date.UTC(year, month, 0);
  if (lastDay < Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1)) {
    return {
      ok: false,
      code: "card_expired",
      field: "exp",
      message: `the card expired at the end of ${String(month).padStart(2, "0")}/${year}`,
    };
  }
  if (!/^\d{3,4}$/.test(typed.cvv.trim())) {
    return {
      ok: false,
      code: "card_cvv_invalid",
      field: "cvv",
      message: "the CVV must be the 3 or 4 digits printed on the card",
    };
  }
  return { ok: true, cardNumber, expirationDate: new Date(lastDay).toISOString().slice(0, 10) };
}

/**
 * The hosted card field's submission: a card checked (`checkTypedCard`) is tokenized and its
 * token returned with the last four; the portal receives only those. The vault keeps the magic
 * test card it is, or the succeeding one for any other card, and its expiry; never a typed number,
 * never the CVV.
 */
export async function tokenizeSandboxCard(
  database: Database,
  typed: TypedCard,
  now: number,
): Promise<
  | { ok: true; tokenId: string; lastFour: string }
  | ({ ok: false } & HostedCardProblem)
> {
  const checked = checkTypedCard(typed, now);
  if (!checked.ok) return checked;
  const { cardNumber, expirationDate } = checked;
  const tokenId = newObjectId("outbound_card_token");
  const magic: readonly string[] = [
    sandboxTestDetails.cardDeclined,
    sandboxTestDetails.cardNotPushable,
  ];
  const testCard = magic.includes(cardNumber) ? cardNumber : sandboxTestDetails.cardSucceeds;
  await database.writer.write((tx) =>
    insertSimulatedCard(tx, { tokenId, cardNumber: testCard, expirationDate }, now)
  );
  return { ok: true, tokenId, lastFour: cardNumber.slice(-4) };
}
