/** Surface B request shapes (valibot), built from the configured limits, and response shapes. */
import * as v from "valibot";
import type { PayeeRecord, V1Disbursement } from "../../lib/disbursements/service.ts";
import type { Config } from "../../lib/platform/config.ts";
import { centsToDollars } from "../../lib/platform/money.ts";
import { modalityOf, surfaceBStatus } from "../../lib/payouts/states.ts";
import type { LinePrincipal } from "../context.ts";
import {
  freeText,
  jsonDollars,
  payByDate,
  phoneNumber,
  requiredObject,
  stateCode,
  stringRecord,
  zipCode,
} from "../validation.ts";

const modalityCodes = [
  "ach",
  "check",
  "vcc",
  "instant_deposit",
  "instant",
  "digital_check",
  "venmo",
  "paypal",
];

export const externalIdSchema = (name: string, lengthMax: number) =>
  v.pipe(
    v.string(`${name} must be a string`),
    v.minLength(1, `${name} must not be empty`),
    v.maxLength(lengthMax, `${name} is at most ${lengthMax} characters`),
    v.regex(/^[A-Za-z0-9][A-Za-z0-9_.+@:-]*$/, `${name} may hold letters, digits and _ . + @ : -`),
  );

const modalitySchema = v.pipe(
  v.string("each modality must be a string"),
  v.picklist(modalityCodes, `each modality must be one of ${modalityCodes.join(", ")}`),
  // `instant` is an alias of `instant_deposit`.
  v.transform((code) => modalityOf(code)!.code),
);

export function v1Schemas(config: Config) {
  const { limits } = config;
  const text = (name: string) => freeText(name, limits.STRING_LENGTH_MAX);
  const metadata = stringRecord("metadata", {
    keysMax: limits.METADATA_KEYS_MAX,
    keyLengthMax: limits.METADATA_KEY_LENGTH_MAX,
    valueLengthMax: limits.METADATA_VALUE_LENGTH_MAX,
  });
  return {
    createDisbursement: requiredObject({
      amount: jsonDollars("amount", {
        minCents: limits.AMOUNT_MIN_CENTS,
        maxCents: limits.AMOUNT_MAX_CENTS,
      }),
      claim_id: v.pipe(text("claim_id"), v.minLength(1, "claim_id must not be empty")),
      payee: requiredObject(
        { id: externalIdSchema("payee.id", limits.STRING_LENGTH_MAX) },
        "payee",
      ),
      // Left out, the payee's modality_defaults apply (the service refuses when both are missing).
      modalities: v.optional(v.pipe(
        v.array(modalitySchema, "modalities must be an array"),
        v.minLength(1, "modalities needs at least one modality"),
        v.description(
          "The modalities offered to the payee. Left out, the payee's modality_defaults are " +
            "offered; a 400 naming modalities when the payee has none either.",
        ),
        v.transform((codes) => [...new Set(codes)]),
      )),
      metadata: v.optional(metadata, {}),
      pay_by: v.optional(payByDate("pay_by")),
    }),
    upsertPayee: requiredObject({
      id: externalIdSchema("id", limits.STRING_LENGTH_MAX),
      name: v.optional(v.nullable(text("name"))),
      email: v.optional(
        v.nullable(v.pipe(text("email"), v.email("email is not a valid e-mail address"))),
      ),
      phone: v.optional(v.nullable(phoneNumber("phone"))),
      language: v.optional(v.picklist(["en", "es"], "language must be en or es")),
      contact_channel: v.optional(
        v.picklist(["email", "sms"], "contact_channel must be email or sms"),
      ),
      modality_defaults: v.optional(v.array(modalitySchema, "modality_defaults must be an array")),
      address: v.optional(v.nullable(v.object({
        line1: text("address.line1"),
        line2: v.optional(text("address.line2")),
        city: text("address.city"),
        state: stateCode("address.state"),
        postal_code: zipCode("address.postal_code"),
      }, "address must be an object"))),
      type: v.optional(v.pipe(
        v.picklist(["individual", "business"], "type must be individual or business"),
        v.description(
          "Extension. A business payee's ACH credits go in a CCD batch, a person's in a PPD " +
            "batch. Default individual.",
        ),
      )),
    }),
    listQuery: v.object({
      limit: v.optional(
        v.pipe(
          v.string(),
          v.regex(/^\d+$/, "limit must be a whole number"),
          v.transform(Number),
          v.minValue(1, "limit must be at least 1"),
          v.maxValue(100, "limit must be at most 100"),
        ),
        "10",
      ),
      starting_after: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
    }),
  };
}

/**
 * The last time formatted, kept: a create's answer shows its time twice (created, and its
 * timeline's first step), creates of one millisecond share it, and formatting one cost about 2 µs.
 */
let lastIso = { ms: Number.NaN, text: "" };
const iso = (ms: number) => {
  if (ms !== lastIso.ms) lastIso = { ms, text: new Date(ms).toISOString() };
  return lastIso.text;
};

/** The Surface B disbursement object. */
export function disbursementView(d: V1Disbursement, principal: LinePrincipal, baseUrl: string) {
  const timeline: { status: string; at: string; detail?: string }[] = [];
  for (const step of d.timeline) {
    const status = surfaceBStatus[step.status];
    // pending_funds and awaiting_endorsement show as created: one entry per visible status change.
    if (timeline.at(-1)?.status === status) continue;
    timeline.push({ status, at: iso(step.at), ...(step.detail ? { detail: step.detail } : {}) });
  }
  return {
    id: d.id,
    object: "disbursement",
    status: surfaceBStatus[d.status],
    amount: centsToDollars(d.amountCents),
    currency: "USD",
    claim_id: d.claimId,
    payee: d.payeeExternalId === null ? null : { id: d.payeeExternalId },
    modalities: d.allowedPaymentMethodIds.map((id) => modalityOf(id)!.code),
    modality: d.paymentMethodId === null ? null : modalityOf(d.paymentMethodId)!.code,
    metadata: d.metadata,
    // Extension: the date it must be paid by (prompt-payment rules), or null.
    pay_by: d.payBy,
    network: d.network,
    line: principal.lineCode,
    livemode: principal.environment === "live",
    created: iso(d.createdAt),
    // A Surface A payee is reached through /api (resend-notification), not the /pay landing.
    payee_url: d.payeeExternalId === null ? null : `${baseUrl}/pay/${d.id}`,
    timeline,
  };
}

/** The Surface B payee object. */
export function payeeView(p: PayeeRecord, principal: LinePrincipal) {
  return {
    id: p.externalId,
    object: "payee",
    name: p.name,
    email: p.email,
    phone: p.phone,
    language: p.language,
    contact_channel: p.contactChannel,
    modality_defaults: p.modalityDefaults,
    address: p.address,
    type: p.type,
    line: principal.lineCode,
    livemode: principal.environment === "live",
    created: iso(p.createdAt),
    updated: iso(p.updatedAt),
  };
}
