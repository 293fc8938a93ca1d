/**
 * Uploads a file to an S3-compatible bucket with PutObject, signed with AWS Signature V4 by
 * `aws4fetch`. The payload's SHA-256 is signed (`x-amz-content-sha256`), so the store refuses a
 * body that arrives different; the file is streamed with its Content-Length, never held whole.
 */
import { AwsClient } from "aws4fetch";
import type { BackupConfig } from "../platform/config.ts";

/** Attempts per file: a refused or failed PUT is tried again at most this often, then reported. */
const UPLOAD_ATTEMPTS_MAX = 3;
const UPLOAD_RETRY_DELAY_MS = 500;

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
    const size = (await Deno.stat(file.path)).size;
    const body = (await Deno.open(file.path)).readable;
    const signed = await client.sign(url, {
      method: "PUT",
      headers: {
        "Content-Length": String(size),
        "Content-Type": "application/octet-stream",
        "X-Amz-Content-Sha256": file.sha256,
      },
      body,
    });
    try {
      const response = await fetch(signed);
      if (response.ok) {
        await response.body?.cancel();
        return;
      }
      failure = `${response.status} ${(await response.text()).slice(0, 300)}`;
      if (response.status < 500 && response.status !== 429) break;
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, UPLOAD_RETRY_DELAY_MS * attempt));
  }
  throw new Error(`PUT ${url} failed: ${failure}`);
}
