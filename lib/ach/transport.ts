/**
 * How a built ACH file reaches the bank, and how the bank's files come back: SFTP in live (upload
 * under a temporary name, then rename), the sandbox bank in test, or nothing (the file waits for
 * an admin to download and upload it by hand, then `ach:mark-sent`).
 *
 * SFTP with ssh2-sftp-client: the server's host key is checked against the configured
 * `SHA256:<base64>` fingerprint before anything is sent. An upload that fails before its first
 * byte was written answers `not_uploaded` (the pipeline transmits again later); one that fails
 * after the put began throws, because the bank may have picked up part or all of it (the
 * pipeline then marks the file in doubt).
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import type { SftpTarget } from "./bank_settings.ts";

/**
 * The answer of one upload (the engine's: not_uploaded when nothing reached the bank, a refused
 * connection or login). An upload throws when it is not known whether the bank has the file.
 */
export type { UploadAnswer } from "../rails/engine.ts";
import type { UploadAnswer } from "../rails/engine.ts";
import { untilDurable } from "../platform/durability.ts";

/** Connecting, authenticating and checking the host key must end within this. */
export const SFTP_CONNECT_TIMEOUT_MS = 10_000;
/** A whole upload (connect, checks, put, rename) must end within this. */
export const SFTP_UPLOAD_TIMEOUT_MS = 60_000;
/** A whole poll of the inbound directory (list and downloads) must end within this. */
export const SFTP_FETCH_TIMEOUT_MS = 120_000;
/** At most this many inbound files are downloaded in one poll; the rest wait for the next. */
export const INBOUND_FILES_PER_POLL_MAX = 100;
/** An inbound file larger than this is left where it is (an import refuses it anyway). */
export const INBOUND_FILE_BYTES_MAX = 10 * 1024 * 1024;
/** Where imported inbound files are moved, inside the inbound directory. */
export const INBOUND_PROCESSED_DIR = "processed";

/** What this module uses of ssh2-sftp-client (the package ships no types). */
interface SftpSession {
  connect(config: Record<string, unknown>): Promise<unknown>;
  exists(path: string): Promise<false | "d" | "-" | "l">;
  list(path: string): Promise<{ type: string; name: string; size: number }[]>;
  get(path: string): Promise<Buffer>;
  put(
    content: Buffer,
    path: string,
    options?: { writeStreamOptions?: { mode?: number } },
  ): Promise<string>;
  rename(from: string, to: string): Promise<string>;
  mkdir(path: string, recursive?: boolean): Promise<string>;
  end(): Promise<boolean>;
  client: { destroy(): void };
}

/** The fingerprint `ssh-keygen -lf` prints for a host key blob: `SHA256:` + unpadded base64. */
export function hostKeyFingerprintOf(keyBlob: Uint8Array): string {
  const digest = createHash("sha256").update(keyBlob).digest("base64");
  return `SHA256:${digest.replace(/=+$/, "")}`;
}

/** A failure to reach or log in to the bank's server: nothing of ours reached it. */
class NotConnected extends Error {}

/** Another file already has our file's name on the bank's server: an operator must look. */
class NameTaken extends Error {}

/** An SFTP session with the target, host key checked; always ended by `withSession`. */
async function connect(target: SftpTarget): Promise<SftpSession> {
  try {
    await untilDurable();
  } catch (error) {
    throw new NotConnected(
      `not connecting while commits cannot be made durable: ${messageOf(error)}`,
    );
  }
  // Imported at the first connection: the SFTP library (ssh2 and its pure-JS crypto) cost a fifth
  // of every start's route loading, and only live files sent by SFTP need it.
  const { default: SftpClient } = await import("ssh2-sftp-client");
  // Silent global listeners: the library's defaults print plain lines, and failures reach the caller.
  const session = new SftpClient("ach", {
    error: () => {},
    end: () => {},
    close: () => {},
  }) as unknown as SftpSession;
  let presented: string | null = null;
  try {
    await session.connect({
      host: target.host,
      port: target.port,
      username: target.username,
      ...(target.privateKey !== null ? { privateKey: target.privateKey } : {}),
      ...(target.password !== null ? { password: target.password } : {}),
      readyTimeout: SFTP_CONNECT_TIMEOUT_MS,
      hostVerifier: (key: Buffer) => {
        presented = hostKeyFingerprintOf(key);
        return target.hostKeyFingerprint === null || presented === target.hostKeyFingerprint;
      },
    });
  } catch (error) {
    session.client.destroy();
    const reason = presented !== null && presented !== target.hostKeyFingerprint &&
        target.hostKeyFingerprint !== null
      ? `host key mismatch: ${target.host}:${target.port} presented ${presented}, the bank settings expect ${target.hostKeyFingerprint}`
      : `could not connect to ${target.host}:${target.port} as ${target.username}: ${
        messageOf(error)
      }`;
    throw new NotConnected(reason);
  }
  return session;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs `work` on a connected session within `timeoutMs`, then ends the session whatever happened
 * (destroyed on a timeout, so a hung server cannot hold the job).
 */
async function withSession<T>(
  target: SftpTarget,
  timeoutMs: number,
  work: (session: SftpSession) => Promise<T>,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let session: SftpSession | null = null;
  const run = (async () => {
    session = await connect(target);
    return await work(session);
  })();
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the SFTP session with ${target.host} took over ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([run, deadline]);
  } finally {
    clearTimeout(timer);
    const opened = session as SftpSession | null;
    if (opened) await endSession(opened);
    // A session still connecting when the deadline passed is ended by its own failure.
    run.catch(() => {});
  }
}

async function endSession(session: SftpSession): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ended = session.end().catch(() => false);
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), SFTP_CONNECT_TIMEOUT_MS);
  });
  if (!(await Promise.race([ended, late]))) session.client.destroy();
  clearTimeout(timer);
}

const joinPath = (dir: string, name: string) => `${dir.replace(/\/+$/, "")}/${name}`;

async function sha256Of(content: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", content as Uint8Array<ArrayBuffer>);
  return new Uint8Array(digest).toHex();
}

/** Uploads `content` as `fileName` into the outbound directory: temporary name, then rename. */
export async function uploadAchFile(
  target: SftpTarget,
  fileName: string,
  content: Uint8Array,
): Promise<UploadAnswer> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(fileName)) {
    throw new Error(`ACH file name ${JSON.stringify(fileName)} is not a plain file name`);
  }
  const finalPath = joinPath(target.outboundDir, fileName);
  const partPath = joinPath(target.outboundDir, `.${fileName}.part`);
  // Set once the put is called: from then on the bank may hold some of the file.
  let putBegan = false;
  try {
    return await withSession(target, SFTP_UPLOAD_TIMEOUT_MS, async (session) => {
      if (await session.exists(target.outboundDir) !== "d") {
        return notUploaded(`the outbound directory ${target.outboundDir} does not exist`);
      }
      if (await session.exists(finalPath)) {
        return await alreadyThere(session, finalPath, content);
      }
      putBegan = true;
      // Full account numbers: the owner only, not the 0666 a server without a umask would give.
      await session.put(Buffer.from(content), partPath, { writeStreamOptions: { mode: 0o600 } });
      await session.rename(partPath, finalPath);
      return { kind: "uploaded", remotePath: finalPath } as const;
    });
  } catch (error) {
    if (putBegan || error instanceof NameTaken) throw error;
    if (error instanceof NotConnected) return notUploaded(error.message);
    return notUploaded(
      `the upload of ${fileName} stopped before any byte was sent: ${messageOf(error)}`,
    );
  }
}

const notUploaded = (reason: string): UploadAnswer => ({ kind: "not_uploaded", reason });

/**
 * The final name exists already: an earlier upload got through (its answer was lost) when the
 * content is the same; another file under our name is something an operator must look at.
 */
async function alreadyThere(
  session: SftpSession,
  finalPath: string,
  content: Uint8Array,
): Promise<UploadAnswer> {
  const there = await session.get(finalPath);
  const [theirs, ours] = await Promise.all([sha256Of(there), sha256Of(content)]);
  if (theirs === ours) return { kind: "uploaded", remotePath: finalPath };
  throw new NameTaken(
    `${finalPath} already exists on the bank's server with other content (SHA-256 ${theirs}, ours ${ours})`,
  );
}

/** One file found in the inbound directory. */
export interface InboundFile {
  readonly name: string;
  readonly content: Uint8Array;
}

/** Lists and downloads the inbound directory's files (not yet moved to its `processed/`). */
export async function fetchInboundFiles(target: SftpTarget): Promise<readonly InboundFile[]> {
  return await withSession(target, SFTP_FETCH_TIMEOUT_MS, async (session) => {
    const listing = await session.list(target.inboundDir);
    const waiting = listing
      .filter((item) => item.type === "-" && !item.name.startsWith("."))
      .sort((a, b) => a.name.localeCompare(b.name));
    const files: InboundFile[] = [];
    for (const item of waiting) {
      if (files.length === INBOUND_FILES_PER_POLL_MAX) break;
      if (item.size > INBOUND_FILE_BYTES_MAX) {
        console.error(JSON.stringify({
          level: "error",
          msg: "an inbound ACH file is over the size limit and stays in the inbound directory",
          file: item.name,
          bytes: item.size,
          limit_bytes: INBOUND_FILE_BYTES_MAX,
        }));
        continue;
      }
      const content = await session.get(joinPath(target.inboundDir, item.name));
      files.push({ name: item.name, content: new Uint8Array(content) });
    }
    return files;
  });
}

/** Moves an imported inbound file into `processed/`, so the next poll does not see it again. */
export async function markInboundProcessed(target: SftpTarget, name: string): Promise<void> {
  await markInboundFilesProcessed(target, [name]);
}

/**
 * Moves inbound files into `processed/` (created when missing) in one session. A name already
 * there (the bank sent a file under a name it used before) gets a suffix: nothing is overwritten.
 */
export async function markInboundFilesProcessed(
  target: SftpTarget,
  names: readonly string[],
): Promise<void> {
  if (names.length === 0) return;
  await withSession(target, SFTP_FETCH_TIMEOUT_MS, async (session) => {
    const processed = joinPath(target.inboundDir, INBOUND_PROCESSED_DIR);
    if (await session.exists(processed) !== "d") await session.mkdir(processed, true);
    for (const name of names) {
      let destination = joinPath(processed, name);
      if (await session.exists(destination)) {
        destination = `${destination}.${crypto.randomUUID().slice(0, 8)}`;
      }
      await session.rename(joinPath(target.inboundDir, name), destination);
    }
  });
}
