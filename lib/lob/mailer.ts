/**
 * Checks mailed by Lob, as the check rail's transport of print files: for a company whose Lob
 * settings say Lob mails, the print file (built and released after its positive-pay file, as
 * today) is handed over by creating each of its checks still issued at Lob, drawn on the company's
 * check account (Lob's bank account) with the register's number; the positive-pay file goes to the
 * bank as before. A check is created under its own id as Idempotency-Key, and only after asking
 * Lob whether it already holds one for it (by metadata), so a run after a crash, or after Lob's
 * idempotency window, never mails a second check. Every call is made outside write units, by the
 * rail engine's transmission. Once the file is transmitted, `lob.track` polls each check until
 * it is delivered, returned or canceled: the fallback for webhooks that never came.
 */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import { externalJob, type JobHandler, TransientJobError } from "../../db/scheduler.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { CheckTransport } from "../checks/rail.ts";
import type { CheckFileRow } from "../checks/files_store.ts";
import type { BatchRow } from "../rails/batch.ts";
import type { JobTime } from "../rails/engine.ts";
import { type LobCheckRequest, LobClient } from "./client.ts";
import { eventTypeOfTracking, LOB_CHECK_EVENTS, lobPostageOf, refusedForAddress } from "./rules.ts";
import { lobMails, lobSettingsStore } from "./store.ts";
import { applyMailEvent, voidRefusedCheck } from "./service.ts";

/** The job that polls one mailed check at Lob. */
export const LOB_TRACK_JOB = "lob.track";
/** How often a mailed check is polled, and for how long after its file went. */
export const LOB_TRACK_INTERVAL_MS = 12 * 3_600_000;
export const LOB_TRACK_DAYS_MAX = 45;
/** A poll's claim: one or two calls to Lob, well within it. */
const LOB_TRACK_LEASE_MS = 60_000;

export interface LobMailerDeps {
  readonly database: Database;
  readonly secretBox: SecretBox;
  /** How long a call to Lob may take before it counts as unanswered (tests shorten it). */
  readonly timeoutMs?: number;
}

/** What the polling job needs besides: the time its environment's jobs decide with. */
export interface LobTrackDeps extends LobMailerDeps {
  readonly jobTime: JobTime;
}

/** A check Lob refused for its payee's address, in Lob's words. */
interface AddressRefusal {
  readonly checkId: string;
  readonly message: string;
}

/** The mail requests of a print file's checks still issued. */
async function mailRequests(
  deps: LobMailerDeps,
  file: CheckFileRow,
): Promise<LobCheckRequest[] | string> {
  const { rows } = await deps.database.readClient.execute({
    sql: `SELECT c.id, c.payout_id, c.check_number, c.amount_cents, c.memo, c.payee_name,
            c.postage_code, p.method_details, p.address_one, p.address_two, p.city, p.state,
            p.zip_code
          FROM checks c JOIN payouts p ON p.id = c.payout_id
          WHERE c.print_file_id = ? AND c.status = 'issued' ORDER BY c.check_number`,
    args: [file.batchId],
  });
  const requests: LobCheckRequest[] = [];
  for (const row of rows) {
    const postage = lobPostageOf(String(row.postage_code ?? "FC"));
    if (!postage.ok) return `check ${row.check_number}: ${postage.message}`;
    const details = JSON.parse(String(row.method_details ?? "{}")) as Record<string, unknown>;
    const pick = (key: string) =>
      typeof details[key] === "string" && details[key] !== ""
        ? String(details[key])
        : row[key] === null || row[key] === undefined
        ? ""
        : String(row[key]);
    requests.push({
      checkId: String(row.id),
      payoutId: String(row.payout_id),
      companyId: file.companyId,
      checkNumber: Number(row.check_number),
      amountCents: Number(row.amount_cents),
      memo: row.memo === null ? null : String(row.memo),
      payeeName: String(row.payee_name),
      address: {
        line1: pick("address_one"),
        line2: pick("address_two") || null,
        city: pick("city"),
        state: pick("state"),
        zip: pick("zip_code"),
      },
      postage: postage.value,
    });
  }
  return requests;
}

/**
 * Hands a print file to Lob: each check still issued is found at Lob or created there. A check
 * Lob refuses for its payee's address is left out, and voided in the unit that records the file
 * handed over (its payout fails `address_not_mailable` and is offered again once the void reached
 * the bank), while the file goes on with the others. Any other refusal stops the file (nothing of it is lost: the next run skips
 * the checks Lob has); an operator reads the reason on the file.
 */
async function mailPrintFile(
  deps: LobMailerDeps,
  file: CheckFileRow,
  refusals: Map<string, AddressRefusal[]>,
): ReturnType<CheckTransport["upload"]> {
  const settings = await lobSettingsStore.read(
    deps.database.readClient,
    deps.secretBox,
    file.companyId,
  );
  if (settings === null) return { kind: "not_uploaded", reason: "the company has no Lob settings" };
  const requests = await mailRequests(deps, file);
  if (typeof requests === "string") return { kind: "not_uploaded", reason: requests };
  const client = new LobClient(settings, deps.timeoutMs);
  let mailed = 0;
  const refused: AddressRefusal[] = [];
  for (const request of requests) {
    const found = await client.findCheck(request.checkId);
    if (found !== null) {
      mailed++;
      continue;
    }
    const created = await client.createCheck(request, request.checkId);
    if (created.kind === "refused" && refusedForAddress(created)) {
      refused.push({ checkId: request.checkId, message: created.message });
      continue;
    }
    if (created.kind === "refused") {
      return {
        kind: "not_uploaded",
        reason: `Lob refused check ${request.checkNumber} (${created.status}): ${created.message}`,
      };
    }
    mailed++;
  }
  refusals.set(file.batchId, refused);
  return {
    kind: "uploaded",
    remotePath: `lob:${mailed} checks${refused.length > 0 ? `, ${refused.length} refused` : ""}`,
  };
}

/**
 * The check transport with Lob mailing the print files of the companies that chose it; every
 * other file goes through `base` (the bank's SFTP, an admin's download, the sandbox bank).
 */
export function lobMailingTransport(base: CheckTransport, deps: LobMailerDeps): CheckTransport {
  // Lob's refusals of a file's checks, from its hand-over to the unit that records it. Lost in a
  // crash between them, they come back: the file is then in doubt, and sent again Lob refuses the
  // same checks again.
  const refusals = new Map<string, AddressRefusal[]>();
  const mailedByLob = (settings: { providerMails: boolean }, file: Pick<CheckFileRow, "kind">) =>
    file.kind === "print" && settings.providerMails;
  return {
    takesFilesAnyTime: base.takesFilesAnyTime,
    uploads: (settings, file) => mailedByLob(settings, file) || base.uploads(settings, file),
    upload: (settings, file, content) =>
      mailedByLob(settings, file)
        ? mailPrintFile(deps, file, refusals)
        : base.upload(settings, file, content),
    sent: base.sent,
    printed: async (tx, batch, at) => {
      await base.printed?.(tx, batch, at);
      if (!(await lobMails(tx, batch.companyId))) return;
      for (const refused of refusals.get(batch.id) ?? []) {
        await voidRefusedCheck(tx, batch.companyId, refused, at);
      }
      refusals.delete(batch.id);
      await planTracking(tx, batch, at);
    },
  };
}

/** Plans the polling of each check of a print file Lob took. */
async function planTracking(tx: WriteTx, batch: BatchRow, at: number): Promise<void> {
  const { rows } = await tx.execute({
    sql: "SELECT id FROM checks WHERE print_file_id = ? AND status = 'issued'",
    args: [batch.id],
  });
  for (const row of rows) {
    await scheduleJob(tx, {
      companyId: batch.companyId,
      kind: LOB_TRACK_JOB,
      subjectId: String(row.id),
      dueAt: at + LOB_TRACK_INTERVAL_MS,
      payload: { until: at + LOB_TRACK_DAYS_MAX * 86_400_000 },
    }, at);
  }
}

interface TrackRequest {
  readonly checkId: string;
  readonly companyId: string;
  readonly until: number;
}

/** Whether an event ends a check's tracking. */
const ENDS = new Set(["check.delivered", "check.returned_to_sender", "check.deleted"]);

/** `lob.track`: reads one check at Lob and applies what is new, then plans the next read. */
export function lobTrackJob(deps: LobTrackDeps): Record<string, JobHandler> {
  return {
    [LOB_TRACK_JOB]: externalJob<TrackRequest, { events: ReturnType<typeof eventsOf> } | null>({
      leaseMs: LOB_TRACK_LEASE_MS,
      async prepare(tx, job) {
        const { rows } = await tx.execute({
          sql: "SELECT status FROM checks WHERE id = ?",
          args: [job.subjectId],
        });
        if (rows[0]?.status !== "issued") return null;
        const until = typeof job.payload.until === "number" ? job.payload.until : job.dueAt;
        return { checkId: job.subjectId, companyId: job.companyId, until };
      },
      async call(request) {
        const settings = await lobSettingsStore.read(
          deps.database.readClient,
          deps.secretBox,
          request.companyId,
        );
        if (settings === null) return null;
        try {
          const found = await new LobClient(settings, deps.timeoutMs).findCheck(request.checkId);
          return found === null ? { events: [] } : { events: eventsOf(found) };
        } catch (error) {
          throw new TransientJobError(
            `Lob did not answer for check ${request.checkId}: ${
              error instanceof Error ? error.message : String(error)
            }`,
            { cause: error },
          );
        }
      },
      async record(tx, job, answer) {
        if (answer === null) return;
        const now = deps.jobTime(job);
        let ended = false;
        for (const event of answer.events) {
          await applyMailEvent(tx, job.companyId, { ...event, at: event.at || now }, now);
          if (ENDS.has(event.type)) ended = true;
        }
        const until = typeof job.payload.until === "number" ? job.payload.until : job.dueAt;
        const next = now + LOB_TRACK_INTERVAL_MS;
        if (!ended && next <= until) {
          await scheduleJob(tx, {
            companyId: job.companyId,
            kind: LOB_TRACK_JOB,
            subjectId: job.subjectId,
            dueAt: next,
            payload: { until },
          }, now);
        }
      },
    }),
  };
}

/** A Lob check's tracking events (and its cancelation) as mail events. */
function eventsOf(check: Awaited<ReturnType<LobClient["check"]>>) {
  const checkId = check.metadata.check_id;
  const events = check.trackingEvents.map((event) => ({
    id: `${check.id}:${event.id}`,
    type: eventTypeOfTracking(event.name),
    lobCheckId: check.id,
    checkId,
    at: event.time === null || Number.isNaN(Date.parse(event.time)) ? 0 : Date.parse(event.time),
  }));
  if (check.deleted) {
    events.push({
      id: `${check.id}:deleted`,
      type: "check.deleted",
      lobCheckId: check.id,
      checkId,
      at: 0,
    });
  }
  return events.filter((event) => LOB_CHECK_EVENTS[event.type] !== "ignore");
}
