/**
 * Surface A disbursements (seed 2.3-2.5, contract §6): create with many payees and authorization
 * parties, get, get a payee, cancel a payee. Field names are the seed's, `Company_name` included.
 */
import { Hono } from "hono";
import * as v from "valibot";
import {
  type ApiDisbursement,
  cancelApiPayee,
  createApiDisbursement,
  findApiDisbursement,
} from "../../lib/disbursements/service.ts";
import { requestFingerprint } from "../../lib/idempotency/rules.ts";
import { centsToDollars } from "../../lib/platform/money.ts";
import { surfaceAStatus } from "../../lib/payouts/states.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { companyTarget, requestedLine } from "./request.ts";
import { apiSchemas, contactIssues } from "./schemas.ts";
import { errorResponse, type FieldIssue, refusalError } from "../errors.ts";
import { seedTimestamp } from "./format.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";
import { invalidFields, parseJsonBody } from "../validation.ts";

const json = (value: unknown) => JSON.parse(String(value));

/** A payee of the record (seed 2.5): the request fields but payment_method_settings, and status. */
function payeeRecord(fields: Record<string, unknown>, status: keyof typeof surfaceAStatus) {
  return {
    payee_type_id: fields.payee_type_id === null ? null : Number(fields.payee_type_id),
    amount: centsToDollars(Number(fields.amount_cents)),
    payee_uuid: fields.payee_uuid,
    email: fields.email,
    first_name: fields.first_name,
    last_name: fields.last_name,
    address_one: fields.address_one,
    address_two: fields.address_two,
    city: fields.city,
    state: fields.state,
    zip_code: fields.zip_code,
    phone: fields.phone,
    delivery_options: json(fields.delivery_options),
    allowed_payment_method_ids: json(fields.allowed_payment_method_ids),
    permission_required_from: json(fields.permission_required_from),
    field_values: json(fields.field_values),
    custom_document_uuids: json(fields.custom_document_uuids),
    status: surfaceAStatus[status].name,
  };
}

/**
 * The disbursement record of the specification. The create's answer shows parties without
 * party_type and Company_name, as the specification does; a read shows every field the company
 * sent, so a party's Company_name is never lost to it.
 */
function disbursementRecord(d: ApiDisbursement, parties: "as_created" | "whole") {
  return {
    disbursement_uuid: d.uuid,
    payor_email: d.payorEmail,
    authorization_parties: parties === "whole"
      ? d.parties
      : d.parties.map(({ party_type: _type, Company_name: _company, ...shown }) => shown),
    payees: d.payouts.map((p) => payeeRecord(p.fields, p.status)),
    // Extension: the date every payee must be paid by (prompt-payment rules), or null.
    pay_by: (d.payouts[0]?.fields.pay_by ?? null) as string | null,
    created_at: seedTimestamp(d.createdAt),
  };
}

export function apiDisbursementRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { createDisbursement: createBody } = apiSchemas(deps.config);
  type CreateInput = v.InferOutput<typeof createBody>;

  /** Rules across fields: unique uuids, known parties, a channel for each payee. */
  function crossFieldIssues(input: CreateInput): FieldIssue[] {
    const issues: FieldIssue[] = [];
    const issue = (field: string, message: string) =>
      issues.push({ field, location: "body", message });
    const parties = new Set<string>();
    input.authorization_parties.forEach((p, i) => {
      if (parties.has(p.party_uuid)) {
        issue(
          `authorization_parties.${i}.party_uuid`,
          `party_uuid ${p.party_uuid} is listed twice`,
        );
      }
      parties.add(p.party_uuid);
    });
    const payees = new Set<string>();
    input.payees.forEach((p, i) => {
      if (payees.has(p.payee_uuid)) {
        issue(`payees.${i}.payee_uuid`, `payee_uuid ${p.payee_uuid} is listed twice`);
      }
      payees.add(p.payee_uuid);
      p.permission_required_from.forEach((uuid, j) => {
        if (!parties.has(uuid)) {
          issue(
            `payees.${i}.permission_required_from.${j}`,
            `party_uuid ${uuid} is not among authorization_parties`,
          );
        }
      });
      issues.push(...contactIssues(p, `payees.${i}.`));
    });
    return issues;
  }

  app.post("/", async (c) => {
    const principal = c.get("apiPrincipal");
    const body = await parseJsonBody(c, createBody);
    if (!body.ok) return body.response;
    const input = body.value;
    const issues = crossFieldIssues(input);
    if (issues.length > 0) return invalidFields(c, issues);
    const requested = await requestedLine(c, input.line);
    if (!requested.ok) return requested.response;
    const fingerprint = await requestFingerprint("POST", "/api/disbursements", body.text);
    const request = {
      companyId: principal.companyId,
      lineId: requested.line.id,
      payorUserId: principal.userId,
      fingerprint,
      disbursementUuid: input.disbursement_uuid,
      largeDisbursement: input.large_disbursement,
      payBy: input.pay_by ?? null,
      payouts: input.payees.map((p) => ({
        payeeUuid: p.payee_uuid,
        amountCents: p.amount,
        allowedPaymentMethodIds: p.allowed_payment_method_ids,
        permissionRequiredFrom: p.permission_required_from,
        payee: {
          payee_type_id: p.payee_type_id,
          first_name: p.first_name,
          last_name: p.last_name,
          email: p.email,
          phone: p.phone,
          address_one: p.address_one,
          address_two: p.address_two,
          city: p.city,
          state: p.state,
          zip_code: p.zip_code,
        },
        deliveryOptions: p.delivery_options,
        fieldValues: p.field_values,
        paymentMethodSettings: p.payment_method_settings,
        customDocumentUuids: p.custom_document_uuids,
      })),
      parties: input.authorization_parties,
    };
    return await respondIdempotently(
      c,
      deps,
      companyTarget(c),
      (tx) =>
        createApiDisbursement(
          tx,
          principal.database,
          request,
          deps.clock.now(),
          deps.config.checkMicrFont,
        ),
      (created) => {
        if (!created.ok) {
          const duplicate = created.code === "duplicate_disbursement";
          return refusalOutcome(
            c,
            refusalError(created, duplicate ? { issue: "already used" } : {}),
          );
        }
        const { disbursement } = created.value;
        return {
          status: created.value.created ? 201 : 200,
          body: disbursementRecord(disbursement, "as_created"),
        };
      },
    );
  });

  const notFound = (what: string) => ({
    status: 404 as const,
    code: "not_found",
    message: `no ${what} for this company`,
  });

  app.get("/:disbursement_uuid", async (c) => {
    const principal = c.get("apiPrincipal");
    const uuid = c.req.param("disbursement_uuid");
    const found = await findApiDisbursement(principal.database, principal.companyId, uuid);
    if (!found) return errorResponse(c, notFound(`disbursement ${JSON.stringify(uuid)}`));
    return c.json(disbursementRecord(found, "whole"));
  });

  app.get("/:disbursement_uuid/payees/:payee_uuid", async (c) => {
    const principal = c.get("apiPrincipal");
    const found = await findApiDisbursement(
      principal.database,
      principal.companyId,
      c.req.param("disbursement_uuid"),
      c.req.param("payee_uuid"),
    );
    const payout = found?.payouts[0];
    if (!payout) {
      return errorResponse(
        c,
        notFound(`payee ${JSON.stringify(c.req.param("payee_uuid"))} in this disbursement`),
      );
    }
    return c.json(payeeRecord(payout.fields, payout.status));
  });

  app.post("/:disbursement_uuid/payees/:payee_uuid/cancel", async (c) => {
    const principal = c.get("apiPrincipal");
    const ref = {
      companyId: principal.companyId,
      disbursementUuid: c.req.param("disbursement_uuid"),
      payeeUuid: c.req.param("payee_uuid"),
    };
    return await respondIdempotently(
      c,
      deps,
      companyTarget(c),
      (tx) => cancelApiPayee(tx, principal.database, ref, deps.clock.now()),
      (canceled) =>
        canceled.ok
          ? { status: 200, body: payeeRecord(canceled.value.fields, canceled.value.status) }
          : refusalOutcome(c, refusalError(canceled)),
    );
  });
  return app;
}
