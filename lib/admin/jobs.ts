/**
 * Scheduled jobs for an operator: the pending and the parked ones listed, and parked jobs put back
 * in the queue. A parked job failed on something a retry would not cure by itself (a programming
 * error, a refused rule); once the cause is fixed, the operator re-queues it and the next sweep
 * runs it as if it had just fallen due.
 */
import type { Database } from "../../db/client.ts";
import {
  companiesWithParkedJobs,
  findJob,
  type JobListing,
  listJobs,
  requeueParkedJobs,
} from "../../db/scheduler_store.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { domainNow } from "../sandbox/clock_store.ts";

/** Jobs one listing shows at most. */
export const JOBS_LISTED_MAX = 100;

/** A job as the operator commands print it. */
function jobView(job: JobListing) {
  return {
    id: job.id,
    kind: job.kind,
    subject: job.subjectId,
    company_id: job.companyId,
    due: new Date(job.dueAt).toISOString(),
    ...(job.doneAt === null ? {} : { parked_at: new Date(job.doneAt).toISOString() }),
    attempts: job.attempts,
    error: job.error,
  };
}

/** The parked jobs, latest first, or the pending ones, earliest due first; JOBS_LISTED_MAX at most. */
export async function listScheduledJobs(
  database: Database,
  parked: boolean,
): Promise<{ jobs: ReturnType<typeof jobView>[]; hasMore: boolean }> {
  const jobs = await listJobs(database.readClient, { parked, limit: JOBS_LISTED_MAX + 1 });
  return {
    jobs: jobs.slice(0, JOBS_LISTED_MAX).map(jobView),
    hasMore: jobs.length > JOBS_LISTED_MAX,
  };
}

/**
 * Re-queues one parked job, due now in its company's domain time; refused for an unknown job or
 * one that is not parked.
 */
export async function retryParkedJob(
  database: Database,
  jobId: string,
  realNow: number,
): Promise<Result<{ requeued: string[] }, "job_not_found" | "job_not_parked">> {
  const job = await findJob(database.readClient, jobId);
  if (!job) {
    return refuse("job_not_found", `no job ${jobId} in ${database.environment}`, {
      field: "job",
    });
  }
  if (job.doneAt === null || job.error === null) {
    const state = job.doneAt === null
      ? `pending, due ${new Date(job.dueAt).toISOString()}`
      : "done without an error";
    return refuse("job_not_parked", `job ${jobId} is not parked: it is ${state}`, {
      field: "job",
    });
  }
  const dueAt = await domainNow(database, job.companyId, realNow);
  const requeued = await database.writer.write((tx) =>
    requeueParkedJobs(tx, { companyId: job.companyId, jobId }, dueAt)
  );
  if (requeued.length === 0) {
    // Another operator re-queued it between the read and the write.
    return refuse("job_not_parked", `job ${jobId} is not parked: it was re-queued just now`, {
      field: "job",
    });
  }
  return ok({ requeued });
}

/** Re-queues every parked job, each due now in its company's domain time. */
export async function retryAllParkedJobs(
  database: Database,
  realNow: number,
): Promise<{ requeued: string[] }> {
  const requeued: string[] = [];
  for (const companyId of await companiesWithParkedJobs(database.readClient)) {
    const dueAt = await domainNow(database, companyId, realNow);
    requeued.push(
      ...await database.writer.write((tx) => requeueParkedJobs(tx, { companyId }, dueAt)),
    );
  }
  return { requeued };
}
