/**
 * The rules of scheduled backups, pure: how a backup file is named (its UTC time, so names sort
 * in time order and a restart knows when the last one was taken), when the next one is due, and
 * which ones to delete to keep the newest N.
 */

const NAME = /^backup-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z\.tar$/;

/** `backup-20261124T093000Z.tar` for a backup taken at that UTC second. */
export function backupFileName(at: number): string {
  const iso = new Date(at).toISOString();
  return `backup-${iso.slice(0, 19).replace(/[-:]/g, "")}Z.tar`;
}

/** When a scheduled backup's file was taken, or null for a name that is not one. */
export function backupTakenAt(name: string): number | null {
  const parts = NAME.exec(name);
  if (!parts) return null;
  const [, year, month, day, hour, minute, second] = parts.map(Number);
  return Date.UTC(year, month - 1, day, hour, minute, second);
}

/** Whether a backup is due: none taken yet, or the newest is at least an interval old. */
export function isBackupDue(
  newestAt: number | null,
  now: number,
  intervalMinutes: number,
): boolean {
  if (intervalMinutes <= 0) return false;
  return newestAt === null || now - newestAt >= intervalMinutes * 60_000;
}

/** The backup files to delete so that the newest `keep` remain (other names are left alone). */
export function backupsBeyond(names: readonly string[], keep: number): string[] {
  const backups = names.filter((name) => backupTakenAt(name) !== null).sort();
  return backups.slice(0, Math.max(0, backups.length - keep));
}
