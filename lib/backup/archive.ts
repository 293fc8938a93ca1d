/**
 * The backup file: a plain POSIX tar (ustar) of three entries, in this order: `manifest.json`,
 * `live.db`, `test.db`. Any tar reads it (`tar tvf backup.tar`, `tar xf backup.tar`); the restore
 * reads it with this module and accepts nothing else: exactly those names, in that order, each
 * header's checksum right, each database's bytes matching the SHA-256 the manifest gives.
 */
import { createHash, type Hash } from "node:crypto";
import { ok, refuse, type Result } from "../platform/result.ts";

const BLOCK_BYTES = 512;
/** ustar writes a size in 11 octal digits: 8 GiB less one byte per entry at most. */
export const TAR_ENTRY_BYTES_MAX = 8 ** 11 - 1;
/** How much of a file is read or written at a time. */
const CHUNK_BYTES = 1024 * 1024;
/** A manifest is a few kilobytes; anything near this is not one of ours. */
const MANIFEST_BYTES_MAX = 1024 * 1024;

export const MANIFEST_NAME = "manifest.json";
export const DATABASE_FILES = { live: "live.db", test: "test.db" } as const;
const ENTRY_ORDER = [MANIFEST_NAME, DATABASE_FILES.live, DATABASE_FILES.test];

/** The tables whose row counts a manifest records: the money and what moves it. */
export const MONEY_TABLES = [
  "ledger_accounts",
  "ledger_transactions",
  "ledger_entries",
  "fundings",
  "disbursements",
  "payouts",
  "rail_batch_entries",
  "ach_files",
] as const;

/** What a backup says about one database. */
export interface DatabaseManifest {
  readonly file: string;
  readonly bytes: number;
  readonly sha256: string;
  /** The migrations applied: how many, and the tag of the newest (null: none). */
  readonly migrations: { readonly applied: number; readonly newest: string | null };
  /** Row counts of MONEY_TABLES in the copy itself. */
  readonly rows: Readonly<Record<string, number>>;
}

export interface BackupManifest {
  readonly format: "disbursements-backup";
  readonly format_version: 1;
  readonly created_at: string;
  readonly deno: string;
  readonly sqlite: string;
  readonly databases: { readonly live: DatabaseManifest; readonly test: DatabaseManifest };
}

export const sha256Hasher = (): Hash => createHash("sha256");

/** The SHA-256 of a file, read a chunk at a time. */
export async function sha256OfFile(path: string): Promise<string> {
  const hash = sha256Hasher();
  using file = await Deno.open(path);
  const buffer = new Uint8Array(CHUNK_BYTES);
  for (;;) {
    const read = await file.read(buffer);
    if (read === null) break;
    hash.update(buffer.subarray(0, read));
  }
  return hash.digest("hex");
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, "0") + "\0";
}

function tarHeader(name: string, size: number, mtimeSeconds: number): Uint8Array {
  const header = new Uint8Array(BLOCK_BYTES);
  const put = (offset: number, text: string) => header.set(new TextEncoder().encode(text), offset);
  put(0, name);
  put(100, octal(0o600, 8));
  put(108, octal(0, 8));
  put(116, octal(0, 8));
  put(124, octal(size, 12));
  put(136, octal(mtimeSeconds, 12));
  put(148, "        ");
  put(156, "0");
  put(257, "ustar\0");
  put(263, "00");
  const sum = header.reduce((total, byte) => total + byte, 0);
  put(148, sum.toString(8).padStart(6, "0") + "\0 ");
  return header;
}

const padding = (size: number) => (BLOCK_BYTES - size % BLOCK_BYTES) % BLOCK_BYTES;

/**
 * Writes the archive to `out` (mode 0600, created new) from the manifest and the two database
 * copies, hashing every byte written; returns the file's SHA-256.
 */
export async function writeArchive(
  out: string,
  manifest: BackupManifest,
  copies: { readonly live: string; readonly test: string },
): Promise<string> {
  const hash = sha256Hasher();
  using file = await Deno.open(out, { write: true, createNew: true, mode: 0o600 });
  const write = async (bytes: Uint8Array) => {
    hash.update(bytes);
    for (let written = 0; written < bytes.length;) {
      written += await file.write(bytes.subarray(written));
    }
  };
  const mtime = Math.floor(Date.parse(manifest.created_at) / 1000);
  const manifestBytes = new TextEncoder().encode(JSON.stringify(manifest, null, 2) + "\n");
  await write(tarHeader(MANIFEST_NAME, manifestBytes.length, mtime));
  await write(manifestBytes);
  await write(new Uint8Array(padding(manifestBytes.length)));
  for (const environment of ["live", "test"] as const) {
    const size = (await Deno.stat(copies[environment])).size;
    if (size > TAR_ENTRY_BYTES_MAX) {
      throw new RangeError(
        `${environment} database is ${size} bytes: a backup entry holds at most ${TAR_ENTRY_BYTES_MAX}`,
      );
    }
    await write(tarHeader(DATABASE_FILES[environment], size, mtime));
    using source = await Deno.open(copies[environment]);
    const buffer = new Uint8Array(CHUNK_BYTES);
    for (;;) {
      const read = await source.read(buffer);
      if (read === null) break;
      await write(buffer.subarray(0, read));
    }
    await write(new Uint8Array(padding(size)));
  }
  await write(new Uint8Array(BLOCK_BYTES * 2));
  await file.sync();
  return hash.digest("hex");
}

/** Reads a file in order, hashing every byte read. */
class HashingReader {
  readonly hash = sha256Hasher();
  readonly #file: Deno.FsFile;
  #buffer = new Uint8Array(0);

  constructor(file: Deno.FsFile) {
    this.#file = file;
  }

  /** Exactly `bytes` bytes, given to `sink` chunk by chunk; false when the file ends first. */
  async stream(bytes: number, sink: (chunk: Uint8Array) => Promise<void> | void): Promise<boolean> {
    let left = bytes;
    while (left > 0) {
      if (this.#buffer.length === 0) {
        const chunk = new Uint8Array(Math.min(CHUNK_BYTES, Math.max(left, BLOCK_BYTES)));
        const read = await this.#file.read(chunk);
        if (read === null) return false;
        this.#buffer = chunk.subarray(0, read);
        this.hash.update(this.#buffer);
      }
      const taken = this.#buffer.subarray(0, Math.min(left, this.#buffer.length));
      this.#buffer = this.#buffer.subarray(taken.length);
      left -= taken.length;
      await sink(taken);
    }
    return true;
  }

  async exactly(bytes: number): Promise<Uint8Array | null> {
    const out = new Uint8Array(bytes);
    let at = 0;
    const complete = await this.stream(bytes, (chunk) => {
      out.set(chunk, at);
      at += chunk.length;
    });
    return complete ? out : null;
  }

  /** Hashes the rest of the file (what follows the end blocks still counts in its SHA-256). */
  async drain(): Promise<void> {
    while (await this.stream(CHUNK_BYTES, () => {}));
  }
}

function parseHeader(header: Uint8Array): { name: string; size: number } | string {
  const text = (offset: number, length: number) =>
    new TextDecoder().decode(header.subarray(offset, offset + length)).replace(/\0.*$/s, "");
  const stored = parseInt(text(148, 8).trim(), 8);
  let sum = 0;
  for (let i = 0; i < BLOCK_BYTES; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i];
  if (stored !== sum) return "a tar header's checksum is wrong";
  if (text(257, 6) !== "ustar" || text(156, 1) !== "0") return "an entry is not a ustar file";
  const size = parseInt(text(124, 12).trim(), 8);
  if (!Number.isSafeInteger(size) || size < 0) return "an entry's size is unreadable";
  return { name: text(0, 100), size };
}

/** Where each checked entry's bytes go while the archive is read: nowhere, or to a file. */
export type EntrySink = (name: string) => Promise<
  { write(chunk: Uint8Array): Promise<void>; close(): Promise<void> } | null
>;

export type ArchiveRefusal = "backup_corrupted";

/**
 * Reads a whole archive: each header, the manifest, and each database's bytes against the
 * manifest's SHA-256 and size, sending the databases to `sink`. Returns the manifest and the
 * file's SHA-256, or a refusal naming what is wrong.
 */
export async function readArchive(
  path: string,
  sink: EntrySink,
): Promise<Result<{ manifest: BackupManifest; sha256: string }, ArchiveRefusal>> {
  using file = await Deno.open(path);
  const reader = new HashingReader(file);
  const corrupted = (what: string) =>
    refuse("backup_corrupted", `${path} is not a whole backup: ${what}`, { field: "from" });
  let manifest: BackupManifest | null = null;
  for (const expected of ENTRY_ORDER) {
    const header = await reader.exactly(BLOCK_BYTES);
    if (header === null) return corrupted(`it ends before ${expected}`);
    const parsed = parseHeader(header);
    if (typeof parsed === "string") return corrupted(parsed);
    if (parsed.name !== expected) {
      return corrupted(`found entry ${JSON.stringify(parsed.name)} where ${expected} belongs`);
    }
    if (expected === MANIFEST_NAME) {
      if (parsed.size > MANIFEST_BYTES_MAX) {
        return corrupted(`its manifest is ${parsed.size} bytes`);
      }
      const bytes = await reader.exactly(parsed.size);
      if (bytes === null) return corrupted("it ends inside the manifest");
      const read = parseManifest(new TextDecoder().decode(bytes));
      if (typeof read === "string") return corrupted(read);
      manifest = read;
    } else {
      const described = Object.values(manifest!.databases).find((d) => d.file === expected)!;
      if (parsed.size !== described.bytes) {
        return corrupted(
          `${expected} holds ${parsed.size} bytes, the manifest says ${described.bytes}`,
        );
      }
      const hash = sha256Hasher();
      const target = await sink(expected);
      try {
        const complete = await reader.stream(parsed.size, async (chunk) => {
          hash.update(chunk);
          await target?.write(chunk);
        });
        if (!complete) return corrupted(`it ends inside ${expected}`);
      } finally {
        await target?.close();
      }
      const sha256 = hash.digest("hex");
      if (sha256 !== described.sha256) {
        return corrupted(
          `the SHA-256 of ${expected} is ${sha256}, the manifest says ${described.sha256}`,
        );
      }
    }
    if (await reader.exactly(padding(parsed.size)) === null) return corrupted("it is cut short");
  }
  await reader.drain();
  return ok({ manifest: manifest!, sha256: reader.hash.digest("hex") });
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

function parseManifest(text: string): BackupManifest | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "its manifest is not JSON";
  }
  const manifest = value as Partial<BackupManifest>;
  if (manifest?.format !== "disbursements-backup") return "its manifest is not a backup's";
  if (manifest.format_version !== 1) {
    return `its format_version is ${JSON.stringify(manifest.format_version)}; this code reads 1`;
  }
  for (const environment of ["live", "test"] as const) {
    const database = manifest.databases?.[environment];
    if (
      database?.file !== DATABASE_FILES[environment] || !Number.isSafeInteger(database.bytes) ||
      !SHA256_HEX.test(String(database.sha256)) ||
      !Number.isSafeInteger(database.migrations?.applied)
    ) return `its manifest does not describe the ${environment} database`;
  }
  return manifest as BackupManifest;
}

/** The line of a `.sha256` file beside a backup, as `sha256sum` writes and checks it. */
export const sha256Line = (sha256: string, fileName: string) => `${sha256}  ${fileName}\n`;

/** The SHA-256 a `.sha256` file gives, or null when it holds none. */
export function sha256FromLine(text: string): string | null {
  const first = text.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  return SHA256_HEX.test(first) ? first : null;
}
