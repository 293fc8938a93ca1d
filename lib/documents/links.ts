/**
 * Expiring signed links to signed documents (contract §9): the link carries its environment, the
 * signed copy's id and an expiry, authenticated by HMAC-SHA256, so it can be handed to whoever the
 * company chooses without a token, and stops working when it expires.
 */
import type { Environment } from "../platform/config.ts";
import { PurposeMac } from "../platform/crypto.ts";
import { constantTimeEqual } from "../platform/keys.ts";

/** Long enough to download after listing, short enough that a leaked link soon dies. */
export const DOCUMENT_LINK_TTL_MS = 15 * 60_000;

export class DocumentLinkSigner {
  readonly #mac: PurposeMac;

  constructor(secret: Uint8Array) {
    this.#mac = new PurposeMac(secret, "document-links");
  }

  #signature(environment: Environment, id: string, expiresAt: number): Promise<string> {
    return this.#mac.sign(`${environment}.${id}.${expiresAt}`);
  }

  /** The path and query of a link to signed document `id`, valid until `now + ttl`. */
  async link(environment: Environment, id: string, now: number): Promise<string> {
    const expires = Math.floor((now + DOCUMENT_LINK_TTL_MS) / 1000);
    const signature = await this.#signature(environment, id, expires);
    return `/documents/${environment}/signed/${
      encodeURIComponent(id)
    }?expires=${expires}&signature=${signature}`;
  }

  /** Whether a link's parts were issued here and have not expired. */
  async verify(
    environment: Environment,
    id: string,
    expires: string | undefined,
    signature: string | undefined,
    now: number,
  ): Promise<boolean> {
    if (!expires || !signature || !/^\d{1,12}$/.test(expires)) return false;
    if (Number(expires) * 1000 <= now) return false;
    return constantTimeEqual(await this.#signature(environment, id, Number(expires)), signature);
  }
}
