/**
 * The payee portal on the database (contract §9): portal links and their one-time codes, the
 * documents a payee or party must sign, endorsements by authorization parties, and the payee's
 * choice of method. Every write runs in the caller's write unit; moves go through applyMove.
 */
import { boolean, columnsOf, json, nullable, oneOf, renamed, rowMapper } from "../../db/rows.ts";
import {
  authorizationParties,
  companies,
  disbursements,
  documents,
  endorsements,
  payees,
  payouts,
  payoutTransitions,
  portalLinks,
} from "../../db/schema.ts";
import type { Environment } from "../platform/config.ts";
import { type SignatureRecord, stampCertificate } from "../documents/certificate.ts";
import { newId, sha256Hex } from "../platform/keys.ts";
import { type Language, languageOf, renderMessage } from "../notify/messages.ts";
import { type PayoutStatus, payoutStatuses } from "../payouts/states.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import type { SqlExecutor } from "../ledger/store.ts";
import {
  issuePortalLink,
  type NotificationSettings,
  notifyPayee,
  payoutContact,
  queueMessages,
  type Recipient,
} from "../notify/store.ts";
import { type PayoutRuntime, scheduleOfferExpiry } from "../payouts/jobs.ts";
import { applyMove, recordPayoutEvent } from "../payouts/store.ts";
import type { WriteTx } from "../../db/writer.ts";

/** contract §9: a code lives 10 minutes; three wrong codes lock the link for 15 minutes. */
export const CODE_TTL_MS = 10 * 60_000;
export const CODE_ATTEMPTS_MAX = 3;
export const CODE_LOCK_MS = 15 * 60_000;
/** A new code at most this often, so the payee's phone is not a target for floods. */
export const CODE_INTERVAL_MS = 30_000;

export interface PortalLink {
  readonly id: string;
  readonly payoutId: string;
  readonly companyId: string;
  /** Set on an authorization party's link; null on the payee's. */
  readonly partyUuid: string | null;
  readonly codeExpiresAt: number | null;
  readonly codeIssuedAt: number | null;
  readonly failedCodeAttempts: number;
  readonly lockedUntil: number | null;
  readonly expiresAt: number;
  readonly replacedAt: number | null;
  /** The language of the holder's messages: the payee's, which a party's messages follow too. */
  readonly language: Language;
}

const LINK_COLUMNS = `l.id, l.payout_id, p.company_id, l.party_uuid, l.code_expires_at,
  l.failed_code_attempts, l.locked_until, l.expires_at, l.replaced_at, y.language`;
const LINK_TABLES = `portal_links l JOIN payouts p ON p.id = l.payout_id
  LEFT JOIN payees y ON y.id = p.payee_id`;

const link = columnsOf(portalLinks);
const payout = columnsOf(payouts);
const toLinkRow = rowMapper({
  id: link.id,
  payoutId: link.payoutId,
  companyId: payout.companyId,
  partyUuid: link.partyUuid,
  codeExpiresAt: link.codeExpiresAt,
  failedCodeAttempts: link.failedCodeAttempts,
  lockedUntil: link.lockedUntil,
  expiresAt: link.expiresAt,
  replacedAt: link.replacedAt,
  // A LEFT JOIN: a Surface A payout has no /v1 payee.
  language: nullable(columnsOf(payees).language),
});

function toLink(row: Readonly<Record<string, unknown>>): PortalLink {
  const { language, ...stored } = toLinkRow(row);
  return {
    ...stored,
    codeIssuedAt: stored.codeExpiresAt === null ? null : stored.codeExpiresAt - CODE_TTL_MS,
    language: languageOf(language),
  };
}

/** The link a token names, live or not (the caller tells expired from live by its domain time). */
export async function findLinkByToken(
  executor: SqlExecutor,
  token: string,
): Promise<PortalLink | null> {
  const { rows } = await executor.execute({
    sql: `SELECT ${LINK_COLUMNS} FROM ${LINK_TABLES} WHERE l.token_hash = ?`,
    args: [await sha256Hex(token)],
  });
  return rows[0] ? toLink(rows[0]) : null;
}

async function loadLink(executor: SqlExecutor, linkId: string): Promise<PortalLink> {
  const { rows } = await executor.execute({
    sql: `SELECT ${LINK_COLUMNS} FROM ${LINK_TABLES} WHERE l.id = ?`,
    args: [linkId],
  });
  if (!rows[0]) throw new Error(`no portal link ${linkId}`);
  return toLink(rows[0]);
}

export interface PortalParty {
  readonly partyUuid: string;
  readonly status: "pending" | "endorsed" | "declined";
  readonly name: string;
  /** Contacts the company supplied: read-only in the portal. */
  readonly companyEmail: string | null;
  readonly companyPhone: string | null;
  /** Contacts the payee entered when the company supplied none. */
  readonly enteredEmail: string | null;
  readonly enteredPhone: string | null;
  readonly linkSent: boolean;
  readonly decidedAt: number | null;
}

const endorsement = columnsOf(endorsements);
const party = columnsOf(authorizationParties);
const toPartyRow = rowMapper({
  partyUuid: endorsement.partyUuid,
  status: endorsement.status,
  enteredEmail: endorsement.contactEmail,
  enteredPhone: endorsement.contactPhone,
  decidedAt: endorsement.decidedAt,
  firstName: party.firstName,
  lastName: party.lastName,
  companyName: party.companyName,
  companyEmail: party.email,
  companyPhone: party.phone,
  linkSent: boolean("portal_links", "link_sent"),
});

/** The parties whose endorsement the payout needs, in the order the company listed them. */
export async function listParties(executor: SqlExecutor, payoutId: string): Promise<PortalParty[]> {
  const { rows } = await executor.execute({
    sql: `SELECT e.party_uuid, e.status, e.contact_email, e.contact_phone, e.decided_at,
                 a.first_name, a.last_name, a.company_name, a.email, a.phone,
                 EXISTS (SELECT 1 FROM portal_links l WHERE l.payout_id = e.payout_id
                           AND l.party_uuid = e.party_uuid) AS link_sent
            FROM endorsements e JOIN payouts p ON p.id = e.payout_id
            LEFT JOIN authorization_parties a
              ON a.disbursement_id = p.disbursement_id AND a.party_uuid = e.party_uuid
           WHERE e.payout_id = ? ORDER BY e.rowid`,
    args: [payoutId],
  });
  return rows.map((row) => {
    const { firstName, lastName, companyName, ...stored } = toPartyRow(row);
    return {
      ...stored,
      name: [firstName, lastName].filter(Boolean).join(" ") || companyName ||
        "Authorization party",
    };
  });
}

export async function findParty(
  executor: SqlExecutor,
  payoutId: string,
  partyUuid: string,
): Promise<PortalParty | null> {
  return (await listParties(executor, payoutId)).find((p) => p.partyUuid === partyUuid) ?? null;
}

function partyRecipient(party: PortalParty): Recipient {
  const email = party.companyEmail ?? party.enteredEmail;
  const phone = party.companyPhone ?? party.enteredPhone;
  return {
    email,
    phone,
    channels: { email: email !== null, sms: email === null && phone !== null },
  };
}

function randomCode(): string {
  // Rejection sampling keeps the six digits uniform.
  const limit = Math.floor(0x1_0000_0000 / 1_000_000) * 1_000_000;
  for (;;) {
    const [value] = crypto.getRandomValues(new Uint32Array(1));
    if (value < limit) return String(value % 1_000_000).padStart(6, "0");
  }
}

const codeHash = (linkId: string, code: string) => sha256Hex(`${linkId}:${code}`);

/**
 * Sends a one-time code to the link holder's channels. Codes, attempts and locks run on real
 * time, like every security limit; messages are stamped with the domain time.
 */
export async function sendVerificationCode(
  tx: WriteTx,
  environment: Environment,
  linkId: string,
  times: { realNow: number; domainNow: number },
): Promise<Result<{ channels: ("email" | "sms")[] }, "link_locked" | "code_too_soon">> {
  const link = await loadLink(tx, linkId);
  const { realNow } = times;
  if (link.lockedUntil !== null && link.lockedUntil > realNow) {
    return refuse("link_locked", "too many wrong codes", {
      details: { locked_until: link.lockedUntil },
    });
  }
  if (link.codeIssuedAt !== null && link.codeIssuedAt + CODE_INTERVAL_MS > realNow) {
    return refuse("code_too_soon", "a code was sent moments ago", {
      details: { retry_at: link.codeIssuedAt + CODE_INTERVAL_MS },
    });
  }
  const code = randomCode();
  await tx.execute({
    sql: "UPDATE portal_links SET code_hash = ?, code_expires_at = ? WHERE id = ?",
    args: [await codeHash(link.id, code), realNow + CODE_TTL_MS, link.id],
  });
  const contact = await payoutContact(tx, link.payoutId);
  let recipient = contact.recipient;
  if (link.partyUuid !== null) {
    const party = await findParty(tx, link.payoutId, link.partyUuid);
    if (!party) throw new Error(`no party ${link.partyUuid} on payout ${link.payoutId}`);
    recipient = partyRecipient(party);
  }
  const channels = await queueMessages(tx, environment, {
    companyId: link.companyId,
    payoutId: link.payoutId,
    recipient,
    rendered: renderMessage("code", contact.language, { ...contact, code }),
    links: [],
    code,
  }, times.domainNow);
  return ok({ channels });
}

const toCodeHash = rowMapper({ codeHash: link.codeHash });

/** Checks a code: right → verified; wrong → one attempt fewer, and at the last one a lock. */
export async function verifyCode(
  tx: WriteTx,
  linkId: string,
  code: string,
  realNow: number,
): Promise<
  Result<void, "link_locked" | "code_expired" | "code_wrong">
> {
  const { rows } = await tx.execute({
    sql: "SELECT code_hash FROM portal_links WHERE id = ?",
    args: [linkId],
  });
  const link = await loadLink(tx, linkId);
  if (link.lockedUntil !== null && link.lockedUntil > realNow) {
    return refuse("link_locked", "too many wrong codes", {
      details: { locked_until: link.lockedUntil },
    });
  }
  const stored = rows[0] ? toCodeHash(rows[0]).codeHash : null;
  if (!stored || link.codeExpiresAt === null || link.codeExpiresAt <= realNow) {
    return refuse("code_expired", "the code has expired; ask for a new one");
  }
  if (/^\d{6}$/.test(code) && await codeHash(link.id, code) === stored) {
    await tx.execute({
      sql: `UPDATE portal_links SET verified_at = ?, code_hash = NULL, code_expires_at = NULL,
              failed_code_attempts = 0 WHERE id = ?`,
      args: [realNow, link.id],
    });
    return ok(undefined);
  }
  const attempts = link.failedCodeAttempts + 1;
  if (attempts >= CODE_ATTEMPTS_MAX) {
    // The lock also voids the code, so the next try needs a new one after the lock.
    await tx.execute({
      sql: `UPDATE portal_links SET failed_code_attempts = 0, locked_until = ?, code_hash = NULL,
              code_expires_at = NULL WHERE id = ?`,
      args: [realNow + CODE_LOCK_MS, link.id],
    });
    return refuse("link_locked", "too many wrong codes", {
      details: { locked_until: realNow + CODE_LOCK_MS },
    });
  }
  await tx.execute({
    sql: "UPDATE portal_links SET failed_code_attempts = ? WHERE id = ?",
    args: [attempts, link.id],
  });
  return refuse("code_wrong", "the code is not right", {
    details: { attempts_left: CODE_ATTEMPTS_MAX - attempts },
  });
}

export interface PortalPayout {
  readonly id: string;
  readonly status: PayoutStatus;
  readonly companyName: string;
  readonly amountCents: number;
  readonly payeeFeeCents: number;
  readonly firstName: string | null;
  readonly lastName: string | null;
  readonly email: string | null;
  readonly phone: string | null;
  readonly allowedPaymentMethodIds: number[];
  readonly paymentMethodId: number | null;
  /** What the payout keeps of the chosen method, for the page to describe it; null before. */
  readonly methodDetails: Readonly<Record<string, string>> | null;
  /** The company's `check_postage_type`, which the payee cannot change. */
  readonly fixedPostage: string | null;
  /** The postage codes the payee may pick (a mail provider's), or null for every code. */
  readonly postageCodes?: readonly string[] | null;
  readonly failureReason: string | null;
  readonly memo: string | null;
  /** The state it was remitted to as unclaimed property, once escheated. */
  readonly escheatedState: string | null;
  readonly timeline: { status: PayoutStatus; at: number; detail: string | null }[];
}

const toPortalPayoutRow = rowMapper({
  id: payout.id,
  status: payout.status,
  companyName: renamed(columnsOf(companies).name, "company_name"),
  amountCents: payout.amountCents,
  payeeFeeCents: payout.payeeFeeCents,
  firstName: payout.firstName,
  lastName: payout.lastName,
  email: payout.email,
  phone: payout.phone,
  allowedPaymentMethodIds: json<number[]>(payout.allowedPaymentMethodIds, "array"),
  paymentMethodId: payout.paymentMethodId,
  methodDetails: json<Record<string, string>, string | null>(payout.methodDetails, "object"),
  settings: json<Record<string, unknown>>(payout.paymentMethodSettings, "object"),
  failureReason: payout.failureReason,
  memo: columnsOf(disbursements).memo,
  escheatedState: payout.escheatedState,
});
const transition = columnsOf(payoutTransitions);
const toTimelineStep = rowMapper({
  status: oneOf(transition.toStatus, payoutStatuses),
  at: transition.at,
  detail: transition.detail,
});

export async function readPortalPayout(
  executor: SqlExecutor,
  payoutId: string,
): Promise<PortalPayout> {
  const { rows } = await executor.execute({
    sql: `SELECT p.id, p.status, p.amount_cents, p.payee_fee_cents, p.first_name, p.last_name,
                 p.email, p.phone, p.allowed_payment_method_ids, p.payment_method_id, p.method_details,
                 p.payment_method_settings, p.failure_reason, p.escheated_state, d.memo,
                 c.name AS company_name
            FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id
            JOIN companies c ON c.id = p.company_id WHERE p.id = ?`,
    args: [payoutId],
  });
  if (!rows[0]) throw new Error(`no payout ${payoutId}`);
  const { settings, ...stored } = toPortalPayoutRow(rows[0]);
  const timeline = await executor.execute({
    sql: `SELECT to_status, at, detail FROM payout_transitions WHERE payout_id = ?
            ORDER BY at, rowid`,
    args: [payoutId],
  });
  return {
    ...stored,
    fixedPostage: typeof settings.check_postage_type === "string"
      ? settings.check_postage_type
      : null,
    timeline: timeline.rows.map(toTimelineStep),
  };
}

export interface PortalDocument {
  readonly id: string;
  readonly name: string;
  readonly docTypeId: number;
  readonly isSignRequired: boolean;
}

const document = columnsOf(documents);
const toPortalDocument = rowMapper({
  id: document.id,
  name: document.name,
  docTypeId: document.docTypeId,
  isSignRequired: document.isSignRequired,
  signed: boolean("signed_documents", "signed"),
});
const toDocumentContent = rowMapper({ name: document.name, content: document.content });
const toDocumentUse = rowMapper({
  oneTimeUse: document.oneTimeUse,
  usedByPayoutId: document.usedByPayoutId,
});

/**
 * Documents shown to a payout's payee (types 1 and 2, and the payout's custom documents) or to
 * its parties (type 3); a one-time document another payout used is no longer offered.
 */
export async function listPortalDocuments(
  executor: SqlExecutor,
  payoutId: string,
  docTypes: readonly number[],
): Promise<(PortalDocument & { signed: boolean })[]> {
  const { rows } = await executor.execute({
    sql: `SELECT d.id, d.name, d.doc_type_id, d.is_sign_required,
                 EXISTS (SELECT 1 FROM signed_documents s WHERE s.document_id = d.id
                           AND s.payout_id = p.id) AS signed
            FROM payouts p JOIN documents d ON d.company_id = p.company_id
           WHERE p.id = ?
             AND (d.doc_type_id IN (SELECT value FROM json_each(?))
                  OR (d.doc_type_id = 4 AND d.id IN (SELECT value FROM json_each(p.custom_document_uuids))
                      AND 4 IN (SELECT value FROM json_each(?))))
             AND (d.one_time_use = 0 OR d.used_by_payout_id IS NULL OR d.used_by_payout_id = p.id)
           ORDER BY d.doc_type_id, d.created_at, d.id`,
    args: [payoutId, JSON.stringify(docTypes), JSON.stringify(docTypes)],
  });
  return rows.map(toPortalDocument);
}

/** The original PDF of a document this payout's portal may show. */
export async function readPortalDocument(
  executor: SqlExecutor,
  payoutId: string,
  documentId: string,
  docTypes: readonly number[],
): Promise<{ name: string; content: Uint8Array } | null> {
  const visible = await listPortalDocuments(executor, payoutId, docTypes);
  if (!visible.some((d) => d.id === documentId)) return null;
  const { rows } = await executor.execute({
    sql: "SELECT name, content FROM documents WHERE id = ?",
    args: [documentId],
  });
  return rows[0] ? toDocumentContent(rows[0]) : null;
}

export interface Signer {
  readonly typedName: string;
  readonly role: string;
  readonly ip: string | null;
  readonly userAgent: string | null;
}

export interface PreparedSignature {
  readonly documentId: string;
  readonly record: SignatureRecord;
  readonly content: Uint8Array;
}

/**
 * Stamps the certificate pages outside the write unit (PDF work is CPU, not database); the
 * signatures are then stored by `storeSignatures` in the unit that acts on them.
 */
export async function prepareSignatures(
  executor: SqlExecutor,
  payoutId: string,
  documents: readonly PortalDocument[],
  signer: Signer,
  now: number,
): Promise<PreparedSignature[]> {
  const prepared: PreparedSignature[] = [];
  for (const document of documents) {
    const original = await readPortalDocument(executor, payoutId, document.id, [
      document.docTypeId,
    ]);
    if (!original) continue;
    const record: SignatureRecord = {
      documentName: original.name,
      signer: signer.typedName,
      role: signer.role,
      signedAt: now,
      ip: signer.ip,
      userAgent: signer.userAgent,
      originalSha256: await sha256Hex(original.content),
    };
    prepared.push({
      documentId: document.id,
      record,
      content: await stampCertificate(original.content, record),
    });
  }
  return prepared;
}

/** Stores signed copies; a one-time document taken by another payout meanwhile is refused. */
export async function storeSignatures(
  tx: WriteTx,
  payoutId: string,
  signatures: readonly PreparedSignature[],
): Promise<Result<void, "document_used">> {
  for (const signature of signatures) {
    const used = await tx.execute({
      sql: `UPDATE documents SET used_by_payout_id = ?
              WHERE id = ? AND one_time_use = 1 AND used_by_payout_id IS NULL`,
      args: [payoutId, signature.documentId],
    });
    if (used.rowsAffected === 0) {
      const { rows } = await tx.execute({
        sql: "SELECT one_time_use, used_by_payout_id FROM documents WHERE id = ?",
        args: [signature.documentId],
      });
      const use = toDocumentUse(rows[0]);
      if (use.oneTimeUse && use.usedByPayoutId !== payoutId) {
        return refuse("document_used", "this one-time document was already used");
      }
    }
    const r = signature.record;
    await tx.execute({
      sql:
        `INSERT INTO signed_documents (id, document_id, payout_id, signed_by, signed_at, signer_ip,
              signer_user_agent, original_sha256, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      args: [
        newId("sdoc"),
        signature.documentId,
        payoutId,
        r.signer,
        r.signedAt,
        r.ip,
        r.userAgent,
        r.originalSha256,
        signature.content,
      ],
    });
  }
  return ok(undefined);
}

/**
 * Sends a party its own link. Contacts the company supplied are used as they are; otherwise the
 * payee's entry (already checked to be well-formed and not the payee's own) is kept and used.
 */
export async function requestPartyEndorsement(
  tx: WriteTx,
  settings: NotificationSettings,
  payoutId: string,
  partyUuid: string,
  entered: { email: string | null; phone: string | null },
  now: number,
): Promise<Result<void, "party_not_pending" | "contact_required">> {
  const party = await findParty(tx, payoutId, partyUuid);
  if (!party || party.status !== "pending") {
    return refuse("party_not_pending", "this party has already decided");
  }
  const suppliedByCompany = party.companyEmail !== null || party.companyPhone !== null;
  if (!suppliedByCompany) {
    if (!entered.email && !entered.phone) {
      return refuse("contact_required", "enter an e-mail or a phone number");
    }
    await tx.execute({
      sql:
        "UPDATE endorsements SET contact_email = ?, contact_phone = ? WHERE payout_id = ? AND party_uuid = ?",
      args: [entered.email, entered.phone, payoutId, partyUuid],
    });
  }
  const updated = (await findParty(tx, payoutId, partyUuid))!;
  const contact = await payoutContact(tx, payoutId);
  const link = await issuePortalLink(tx, settings, payoutId, partyUuid, now);
  await queueMessages(tx, settings.environment, {
    companyId: contact.companyId,
    payoutId,
    recipient: partyRecipient(updated),
    rendered: renderMessage("party_request", contact.language, { ...contact, link }),
    links: [link],
  }, now);
  return ok(undefined);
}

const toPayoutStatus = rowMapper({ status: payout.status });

/**
 * A party endorses or declines. The company sees either as an event; when the last party
 * endorses, the payout is offered and the payee is told with a fresh link. A decline leaves the
 * payout awaiting endorsement until the company cancels or replaces the party (contract §9).
 */
export async function decideEndorsement(
  tx: WriteTx,
  runtime: PayoutRuntime,
  payoutId: string,
  partyUuid: string,
  decision: { endorse: true; typedName: string } | { endorse: false; typedName: string },
  now: number,
): Promise<Result<{ allEndorsed: boolean }, "party_not_pending" | "not_awaiting_endorsement">> {
  const parties = await listParties(tx, payoutId);
  const party = parties.find((p) => p.partyUuid === partyUuid);
  if (!party || party.status !== "pending") {
    return refuse("party_not_pending", "this party has already decided");
  }
  const { rows } = await tx.execute({
    sql: "SELECT status FROM payouts WHERE id = ?",
    args: [payoutId],
  });
  if (!rows[0] || toPayoutStatus(rows[0]).status !== "awaiting_endorsement") {
    return refuse("not_awaiting_endorsement", "this payment no longer needs approval");
  }
  await tx.execute({
    sql: `UPDATE endorsements SET status = ?, typed_name = ?, decided_at = ?
            WHERE payout_id = ? AND party_uuid = ?`,
    args: [
      decision.endorse ? "endorsed" : "declined",
      decision.typedName,
      now,
      payoutId,
      partyUuid,
    ],
  });
  const contacts = [
    party.companyEmail ?? party.enteredEmail,
    party.companyPhone ?? party.enteredPhone,
  ]
    .filter(Boolean).join(", ");
  const source = party.companyEmail || party.companyPhone
    ? "supplied by the company"
    : "entered by the payee";
  await recordPayoutEvent(
    tx,
    payoutId,
    decision.endorse ? "party_approved" : "party_declined",
    `party ${partyUuid} (${contacts}, ${source}) ${
      decision.endorse ? "approved" : "declined"
    } as "${decision.typedName}"`,
    now,
  );
  const allEndorsed = decision.endorse &&
    parties.every((p) => p.partyUuid === partyUuid || p.status === "endorsed");
  if (allEndorsed) {
    const offered = await applyMove(tx, payoutId, { kind: "endorsements_complete" }, now, {
      detail: "every authorization party endorsed",
    });
    if (!offered.ok) throw new Error(`endorsements_complete refused: ${offered.message}`);
    await scheduleOfferExpiry(tx, runtime, offered.value, now);
    await notifyPayee(tx, runtime.notifications, payoutId, "endorsed", now);
  }
  return ok({ allEndorsed });
}

const toPayoutOwner = rowMapper({ payoutId: payout.id, companyId: payout.companyId });

/** The payout of a /v1 disbursement and its company, for its `payee_url`; null if none. */
export async function v1DisbursementPayout(
  executor: SqlExecutor,
  disbursementId: string,
): Promise<{ payoutId: string; companyId: string } | null> {
  const { rows } = await executor.execute({
    sql: `SELECT p.id, p.company_id FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id
            WHERE d.id = ? AND d.kind = 'v1'`,
    args: [disbursementId],
  });
  return rows[0] ? toPayoutOwner(rows[0]) : null;
}
