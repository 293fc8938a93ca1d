/**
 * Scheduled backups on the one worker loop: each tick looks at BACKUP_DIR, and when the newest
 * backup there is an interval old (or there is none) takes a new one, keeps the newest
 * BACKUP_KEEP with their `.sha256` files, then copies it to BACKUP_COPY_DIR and uploads it to the
 * S3 target when they are set. A failed copy or upload fails the sweep (logged and counted in
 * /metrics); the local backup stays, and the next backup is copied as usual.
 */
import { basename } from "node:path";
import { WorkerLoop } from "../../db/worker_loop.ts";
import type { Clock } from "../platform/clock.ts";
import type { BackupConfig, Environment } from "../platform/config.ts";
import type { Metrics } from "../platform/metrics.ts";
import { sha256Hasher, sha256Line } from "./archive.ts";
import { putObject } from "./s3.ts";
import { backupFileName, backupsBeyond, backupTakenAt, isBackupDue } from "./schedule.ts";
import { type BackupTaken, takeBackup } from "./service.ts";
import type { AuditCheckpoint } from "../audit/anchor.ts";
import { writeAuditCheckpoint } from "../audit/service.ts";
import { type StoredStatement, writeLedgerStatementFiles } from "../ledger/statements.ts";

export const BACKUP_WORKER = "backups";
/** Scratch directories of scheduled backups start so, and only those are swept away. */
const SCRATCH_PREFIX = ".scheduled-backup-";

export interface ScheduledBackupSettings extends BackupConfig {
  readonly intervalMinutes: number;
  readonly keep: number;
  readonly busyTimeoutMs: number;
  /**
   * A signed checkpoint of the audit chains, taken just before each backup and written beside its
   * copy (or beside the backup when there is no copy destination), where a rewrite of the
   * database cannot reach it.
   */
  readonly auditCheckpoint?: (now: number) => Promise<AuditCheckpoint>;
  /**
   * Closes the ledger days that ended (signed daily statements, lib/ledger/statements.ts) just
   * before each backup; the statements closed are written beside the checkpoint, under
   * `ledger-statements/<environment>/`.
   */
  readonly ledgerStatements?: (
    now: number,
  ) => Promise<readonly { environment: Environment; statements: readonly StoredStatement[] }[]>;
}

export interface ScheduledBackupOutcome {
  readonly taken: BackupTaken | null;
  readonly deleted: readonly string[];
}

export class ScheduledBackups {
  readonly #urls: Readonly<Record<Environment, string>>;
  readonly #settings: ScheduledBackupSettings;
  readonly #clock: Clock;
  readonly #log: (entry: Record<string, unknown>) => void;
  #loop: WorkerLoop | null = null;

  constructor(
    urls: Readonly<Record<Environment, string>>,
    settings: ScheduledBackupSettings,
    clock: Clock,
    log: (entry: Record<string, unknown>) => void = (entry) => console.log(JSON.stringify(entry)),
  ) {
    this.#urls = urls;
    this.#settings = settings;
    this.#clock = clock;
    this.#log = log;
  }

  /** One pass: a backup when one is due, then the copies and the pruning. */
  async sweep(): Promise<ScheduledBackupOutcome> {
    const { dir, keep, intervalMinutes, copyDir, s3 } = this.#settings;
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    const names = await namesIn(dir);
    await removeLeftovers(dir, names);
    const newest = names.map(backupTakenAt).filter((at) => at !== null).sort().at(-1) ?? null;
    const now = this.#clock.now();
    if (!isBackupDue(newest, now, intervalMinutes)) return { taken: null, deleted: [] };

    // Taken before the copy, so the backup holds every row the checkpoint names.
    const closed = await this.#settings.ledgerStatements?.(now) ?? [];
    const checkpoint = await this.#settings.auditCheckpoint?.(now);
    const name = backupFileName(now);
    const taken = await takeBackup(this.#urls, {
      out: `${dir}/${name}`,
      now,
      busyTimeoutMs: this.#settings.busyTimeoutMs,
      scratchPrefix: SCRATCH_PREFIX,
    });
    if (!taken.ok) throw new Error(taken.message);
    const deleted = await prune(dir, keep);
    this.#log({
      level: "info",
      msg: "backup written",
      file: taken.value.file,
      sha256: taken.value.sha256,
      bytes: taken.value.bytes,
      deleted,
    });

    const failures: string[] = [];
    if (checkpoint) {
      try {
        await writeAuditCheckpoint(copyDir ?? dir, checkpoint);
      } catch (error) {
        failures.push(`audit checkpoint: ${error instanceof Error ? error.message : error}`);
      }
    }
    try {
      for (const { environment, statements } of closed) {
        await writeLedgerStatementFiles(
          `${copyDir ?? dir}/ledger-statements`,
          environment,
          statements,
        );
      }
    } catch (error) {
      failures.push(`ledger statements: ${error instanceof Error ? error.message : error}`);
    }
    if (copyDir !== null) {
      try {
        await Deno.mkdir(copyDir, { recursive: true, mode: 0o700 });
        await copyWithSidecar(taken.value, copyDir);
        await prune(copyDir, keep);
      } catch (error) {
        failures.push(`copy to ${copyDir}: ${error instanceof Error ? error.message : error}`);
      }
    }
    if (s3 !== null) {
      try {
        const sidecar = new TextEncoder().encode(sha256Line(taken.value.sha256, name));
        await putObject(s3, { path: taken.value.file, name, sha256: taken.value.sha256 });
        await putObject(s3, {
          path: `${taken.value.file}.sha256`,
          name: `${name}.sha256`,
          sha256: sha256Hasher().update(sidecar).digest("hex"),
        });
      } catch (error) {
        failures.push(`upload: ${error instanceof Error ? error.message : error}`);
      }
    }
    if (failures.length > 0) {
      throw new Error(`backup ${name} written, but ${failures.join("; ")}`);
    }
    return { taken: taken.value, deleted };
  }

  /**
   * Ticks at once and then every `intervalMs` on the worker loop (a backup is taken only when
   * due), so a start after a long stop takes the overdue backup without waiting a tick.
   */
  start(intervalMs: number, metrics?: Metrics): void {
    this.#loop = new WorkerLoop({
      name: BACKUP_WORKER,
      sweep: () => this.sweep(),
      intervalMs,
      metrics,
    });
    this.#loop.start();
    void this.#loop.tick();
  }

  /** Stops ticking; a backup in flight finishes first. */
  async stop(): Promise<void> {
    await this.#loop?.stop();
    this.#loop = null;
  }
}

async function namesIn(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names;
}

/** What a scheduled backup cut short by a crash left: its scratch directory, its partial file. */
async function removeLeftovers(dir: string, names: readonly string[]): Promise<void> {
  for (const name of names) {
    const partial = name.endsWith(".tar.partial") &&
      backupTakenAt(name.slice(0, -".partial".length)) !== null;
    if (partial || name.startsWith(SCRATCH_PREFIX)) {
      await Deno.remove(`${dir}/${name}`, { recursive: true }).catch(() => {});
    }
  }
}

/** Deletes the oldest backups of `dir` (with their .sha256) beyond the newest `keep`. */
async function prune(dir: string, keep: number): Promise<string[]> {
  const beyond = backupsBeyond(await namesIn(dir), keep);
  for (const name of beyond) {
    await Deno.remove(`${dir}/${name}`);
    await Deno.remove(`${dir}/${name}.sha256`).catch(() => {});
  }
  return beyond;
}

/** Copies a backup and its .sha256 under a temporary name first, so a copy is whole or absent. */
async function copyWithSidecar(taken: BackupTaken, dir: string): Promise<void> {
  const name = basename(taken.file);
  for (const [from, to] of [[taken.file, name], [`${taken.file}.sha256`, `${name}.sha256`]]) {
    await Deno.copyFile(from, `${dir}/${to}.partial`);
    await Deno.rename(`${dir}/${to}.partial`, `${dir}/${to}`);
  }
}
