/**
 * The valibot schemas of Surface A request bodies, shared by the routes that validate with them
 * and the OpenAPI document generated from them. Field names are the seed's.
 */
import * as v from "valibot";
import { FUNDINGS_PAGE_SIZE_DEFAULT, FUNDINGS_PAGE_SIZE_MAX } from "../../lib/funding/service.ts";
import { VOID_REASON_LENGTH_MAX } from "../../lib/checks/register.ts";
import type { Config } from "../../lib/platform/config.ts";
import type { FieldIssue } from "../errors.ts";
import {
  blankAsAbsent,
  cleanText,
  freeText,
  jsonDollars,
  jsonInteger,
  payByDate,
  phoneNumber,
  requiredObject,
  stateCode,
  zipCode,
} from "../validation.ts";

/** Postage CODEs of seed 2.9. */
export const postageCodes = [
  "FC",
  "PR",
  "PRS",
  "SC",
  "FSO",
  "USPSIDAY",
  "USPSCERT",
  "FPO",
  "FFO",
  "FSD",
] as const;

/** A business line's code, as the operator CLI creates it. */
const LINE_CODE_LENGTH_MAX = 40;
/** Type-4 documents one payee may be given to read and sign. */
const CUSTOM_DOCUMENTS_PER_PAYEE_MAX = 20;

export function apiSchemas(config: Config) {
  const { limits } = config;
  const lineCode = freeText("line", LINE_CODE_LENGTH_MAX);
  const text = (name: string) => freeText(name, limits.STRING_LENGTH_MAX);
  const addFundsFields = requiredObject({
    payment_method: v.picklist(
      ["ACH", "WireTransfer"],
      "payment_method must be ACH or WireTransfer",
    ),
    description: v.pipe(text("description"), v.minLength(1, "description must not be empty")),
    large_disbursement: v.boolean("large_disbursement must be true or false"),
    // A funding is capped apart from a payee: one wire may cover a whole large disbursement.
    amount: jsonDollars("amount", {
      minCents: limits.AMOUNT_MIN_CENTS,
      maxCents: limits.FUNDING_AMOUNT_MAX_CENTS,
    }),
    funding_uuid: v.optional(
      v.pipe(text("funding_uuid"), v.minLength(1, "funding_uuid must not be empty")),
    ),
    // The large disbursement waiting in pending_funds that this funding is for.
    disbursement_uuid: v.optional(
      v.pipe(text("disbursement_uuid"), v.minLength(1, "disbursement_uuid must not be empty")),
    ),
    line: v.optional(lineCode),
  });
  const addFunds = v.pipe(
    addFundsFields,
    v.forward(
      v.check(
        (body) => body.disbursement_uuid === undefined || body.large_disbursement,
        "disbursement_uuid names the large disbursement a funding is for: large_disbursement must be true",
      ),
      ["disbursement_uuid"],
    ),
  );
  const listFunds = v.object({
    limit: v.optional(
      v.pipe(
        v.string(),
        v.regex(/^\d+$/, "limit must be a whole number"),
        v.transform(Number),
        v.minValue(1, "limit must be at least 1"),
        v.maxValue(FUNDINGS_PAGE_SIZE_MAX, `limit must be at most ${FUNDINGS_PAGE_SIZE_MAX}`),
      ),
      String(FUNDINGS_PAGE_SIZE_DEFAULT),
    ),
    starting_after: v.optional(v.pipe(text("starting_after"), v.minLength(1))),
    line: v.optional(lineCode),
  });
  const optionalText = (name: string) => v.optional(v.nullable(text(name)), null);
  const identifier = (name: string) =>
    v.pipe(text(name), v.minLength(1, `${name} must not be empty`));
  const amount = jsonDollars("amount", {
    minCents: limits.AMOUNT_MIN_CENTS,
    maxCents: limits.AMOUNT_MAX_CENTS,
  });
  // The seed types these as plain strings: "" where a channel is not used means absent.
  const email = blankAsAbsent(
    "email",
    v.pipe(
      text("email"),
      v.trim(),
      v.email("email is not a valid e-mail address"),
      v.description("An e-mail address."),
    ),
  );
  const phone = blankAsAbsent("phone", phoneNumber("phone"));
  const deliveryOptions = v.optional(
    requiredObject({
      email: v.boolean("delivery_options.email must be true or false"),
      sms: v.boolean("delivery_options.sms must be true or false"),
    }, "delivery_options"),
    { email: true, sms: false },
  );
  const allowedPaymentMethodIds = v.pipe(
    v.array(
      jsonInteger("each payment method id", 1, 7),
      "allowed_payment_method_ids must be an array",
    ),
    v.minLength(1, "allowed_payment_method_ids needs at least one id"),
    v.transform((ids) => [...new Set(ids)]),
  );
  const payee = requiredObject({
    payee_type_id: jsonInteger("payee_type_id", 1, 4),
    amount,
    payee_uuid: identifier("payee_uuid"),
    email,
    first_name: identifier("first_name"),
    last_name: identifier("last_name"),
    address_one: optionalText("address_one"),
    address_two: optionalText("address_two"),
    city: optionalText("city"),
    state: blankAsAbsent("state", stateCode("state")),
    zip_code: blankAsAbsent("zip_code", zipCode("zip_code")),
    phone,
    delivery_options: deliveryOptions,
    allowed_payment_method_ids: allowedPaymentMethodIds,
    permission_required_from: v.optional(
      v.array(identifier("party_uuid"), "permission_required_from must be an array"),
      [],
    ),
    custom_document_uuids: v.optional(
      v.pipe(
        v.array(identifier("document_uuid"), "custom_document_uuids must be an array"),
        v.maxLength(
          CUSTOM_DOCUMENTS_PER_PAYEE_MAX,
          `custom_document_uuids holds at most ${CUSTOM_DOCUMENTS_PER_PAYEE_MAX} documents`,
        ),
        v.transform((ids) => [...new Set(ids)]),
      ),
      [],
    ),
    field_values: v.optional(
      v.array(
        requiredObject({ name: identifier("name"), value: text("value") }, "field value"),
        "field_values must be an array",
      ),
      [],
    ),
    // null (or a null check_postage_type) means no setting: the payee picks the postage.
    payment_method_settings: v.pipe(
      v.optional(
        v.nullable(
          v.object({
            check_postage_type: v.optional(
              v.nullable(
                v.picklist(
                  postageCodes,
                  `check_postage_type must be one of ${postageCodes.join(", ")}`,
                ),
              ),
            ),
          }, "payment_method_settings must be an object"),
        ),
        {},
      ),
      v.transform((settings) =>
        settings?.check_postage_type ? { check_postage_type: settings.check_postage_type } : {}
      ),
    ),
  }, "payee");
  const party = requiredObject({
    party_uuid: identifier("party_uuid"),
    party_type: v.optional(
      v.picklist(["INDIVIDUAL"], "party_type must be INDIVIDUAL"),
      "INDIVIDUAL",
    ),
    title: optionalText("title"),
    Company_name: optionalText("Company_name"),
    email,
    first_name: optionalText("first_name"),
    last_name: optionalText("last_name"),
    phone,
  }, "authorization party");
  const createBody = requiredObject({
    disbursement_uuid: identifier("disbursement_uuid"),
    large_disbursement: v.boolean("large_disbursement must be true or false"),
    pay_by: v.optional(payByDate("pay_by")),
    payees: v.pipe(
      v.array(payee, "payees must be an array"),
      v.minLength(1, "payees needs at least one payee"),
      v.maxLength(
        limits.PAYEES_PER_DISBURSEMENT_MAX,
        `at most ${limits.PAYEES_PER_DISBURSEMENT_MAX} payees`,
      ),
    ),
    authorization_parties: v.optional(
      v.pipe(
        v.array(party, "authorization_parties must be an array"),
        v.maxLength(
          limits.PARTIES_PER_DISBURSEMENT_MAX,
          `at most ${limits.PARTIES_PER_DISBURSEMENT_MAX} authorization parties`,
        ),
      ),
      [],
    ),
    line: v.optional(lineCode),
  });
  const uploadDocument = requiredObject({
    doc_type_id: jsonInteger("doc_type_id", 1, 4),
    name: v.pipe(
      v.string("name must be a string"),
      v.trim(),
      v.minLength(1, "name must not be empty"),
      v.maxLength(
        limits.STRING_LENGTH_MAX,
        `name is at most ${limits.STRING_LENGTH_MAX} characters`,
      ),
      cleanText("name"),
    ),
    is_sign_required: v.optional(v.boolean("is_sign_required must be true or false"), false),
    one_time_use: v.optional(v.boolean("one_time_use must be true or false"), false),
    pdf_base64: v.pipe(
      v.string("pdf_base64 must be a string"),
      v.minLength(1, "pdf_base64 must not be empty"),
    ),
  });
  const simplePayment = requiredObject({
    simple_payment_uuid: identifier("simple_payment_uuid"),
    amount,
    first_name: identifier("first_name"),
    last_name: identifier("last_name"),
    email,
    phone,
    delivery_options: deliveryOptions,
    memo: optionalText("memo"),
    allowed_payment_method_ids: allowedPaymentMethodIds,
    pay_by: v.optional(payByDate("pay_by")),
    line: v.optional(lineCode),
  });
  /** POST /api/checks/{number}/void: why the check is voided, kept on it and in the audit log. */
  const voidCheck = v.strictObject({
    reason: v.pipe(
      freeText("reason", VOID_REASON_LENGTH_MAX),
      v.minLength(1, "reason must not be empty"),
      v.check((reason) => reason.trim() !== "", "reason must not be blank"),
    ),
  }, "the body takes only reason");

  return {
    addFunds,
    listFunds,
    createDisbursement: createBody,
    uploadDocument,
    simplePayment,
    voidCheck,
  };
}

/** A payee must be reachable on every channel its delivery options turn on. */
export function contactIssues(
  payee: {
    delivery_options: { email: boolean; sms: boolean };
    email: string | null;
    phone: string | null;
  },
  fieldPrefix = "",
): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (payee.delivery_options.email && !payee.email) {
    const message = "email is required when delivery_options.email is true";
    issues.push({ field: `${fieldPrefix}email`, location: "body", message });
  }
  if (payee.delivery_options.sms && !payee.phone) {
    const message = "phone is required when delivery_options.sms is true";
    issues.push({ field: `${fieldPrefix}phone`, location: "body", message });
  }
  return issues;
}
