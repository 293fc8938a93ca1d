/**
 * Uploads a file to an S3-compatible bucket with PutObject, signed with AWS Signature V4 by
 * `aws4fetch`. The payload's SHA-256 is signed (`x-amz-content-sha256`), so the store refuses a
 * body that arrives different; the file is streamed with its Content-Length, never held whole.
 * One PUT carries at most 5 GiB (S3's limit for a single PutObject).
 */
import { Buffer } from "node:buffer";
import { createReadStream } from "node:fs";
import { AwsClient } from "aws4fetch";
import type { BackupConfig } from "../platform/config.ts";

/** Attempts per file: a refused or failed PUT is tried again at most this often, then reported. */
const UPLOAD_ATTEMPTS_MAX = 3;
const UPLOAD_RETRY_DELAY_MS = 500;
/** An upload that goes this long without any traffic is abandoned. */
const UPLOAD_TIMEOUT_MS = 60_000;

export type S3Target = NonNullable<BackupConfig["s3"]>;

/** PUTs `path` as `<url>/<name>`; throws with the store's status and answer when it refuses. */
export async function putObject(
  target: S3Target,
  file: { readonly path: string; readonly name: string; readonly sha256: string },
): Promise<void> {
  const client = new AwsClient({
    accessKeyId: target.accessKeyId,
    secretAccessKey: target.secretAccessKey,
    service: "s3",
    region: target.region,
    retries: 0,
  });
  const url = `${target.url}/${encodeURIComponent(file.name)}`;
  let failure = "";
  for (let attempt = 1; attempt <= UPLOAD_ATTEMPTS_MAX; attempt++) {
    // Signed without the body: its SHA-256 is given, so the file need not be read to sign.
    const signed = await client.sign(url, {
      method: "PUT",
      headers: {
        "Content-Type": "application/octet-stream",
        "X-Amz-Content-Sha256": file.sha256,
      },
    });
    try {
      const answer = await sendFile(signed, file.path);
      if (answer.status >= 200 && answer.status < 300) return;
      failure = `${answer.status} ${answer.body.slice(0, 300)}`;
      if (answer.status < 500 && answer.status !== 429) break;
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, UPLOAD_RETRY_DELAY_MS * attempt));
  }
  throw new Error(`PUT ${url} failed: ${failure}`);
}

/**
 * Sends the file as the body of the signed request with its Content-Length, which PutObject
 * requires: fetch would send a streamed body chunked, so node:http streams it instead.
 */
async function sendFile(
  signed: Request,
  path: string,
): Promise<{ status: number; body: string }> {
  const size = (await Deno.stat(path)).size;
  const url = new URL(signed.url);
  const { request } = url.protocol === "https:"
    ? await import("node:https")
    : await import("node:http");
  const headers: Record<string, string> = { "Content-Length": String(size) };
  signed.headers.forEach((value, name) => headers[name] = value);
  return await new Promise((resolve, reject) => {
    const outgoing = request(url, { method: "PUT", headers, timeout: UPLOAD_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on(
        "end",
        () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    outgoing.on(
      "timeout",
      () => outgoing.destroy(new Error(`no answer in ${UPLOAD_TIMEOUT_MS} ms`)),
    );
    outgoing.on("error", reject);
    const source = createReadStream(path);
    source.on("error", (error) => outgoing.destroy(error));
    source.pipe(outgoing);
  });
}
