/**
 * Portal browser sessions and CSRF tokens. A session is a signed cookie value: a random nonce,
 * the portal link it verified (empty before the one-time code), and a real-time expiry. Forms
 * carry a token derived from the nonce, so a page of another site cannot post on the payee's
 * behalf, and a new nonce after verification means a session fixed before it is worth nothing.
 */
import { PurposeMac } from "../platform/crypto.ts";
import { constantTimeEqual, randomBase62 } from "../platform/keys.ts";

/** A verified browser stays verified this long without another code. */
export const PORTAL_SESSION_TTL_MS = 30 * 60_000;
const NONCE_LENGTH = 22;

export interface PortalSession {
  readonly nonce: string;
  /** The portal link this browser proved it controls with a code; null before that. */
  readonly verifiedLinkId: string | null;
  readonly expiresAt: number;
}

export class PortalSessions {
  readonly #mac: PurposeMac;

  constructor(secret: Uint8Array) {
    this.#mac = new PurposeMac(secret, "portal-sessions");
  }

  /** A fresh session: verified for `linkId` when given. */
  start(now: number, linkId: string | null = null): PortalSession {
    return {
      nonce: randomBase62(NONCE_LENGTH),
      verifiedLinkId: linkId,
      expiresAt: now + PORTAL_SESSION_TTL_MS,
    };
  }

  async encode(session: PortalSession): Promise<string> {
    const body = `${session.nonce}.${session.verifiedLinkId ?? ""}.${session.expiresAt}`;
    return `${body}.${await this.#mac.sign(`session|${body}`)}`;
  }

  /** The session a cookie carries, or null when it is missing, altered or expired. */
  async decode(cookie: string | undefined, now: number): Promise<PortalSession | null> {
    const parts = cookie?.split(".") ?? [];
    if (parts.length !== 4) return null;
    const [nonce, linkId, expires, mac] = parts;
    if (!/^\d{1,15}$/.test(expires) || Number(expires) <= now) return null;
    const body = `${nonce}.${linkId}.${expires}`;
    if (!constantTimeEqual(await this.#mac.sign(`session|${body}`), mac)) return null;
    return { nonce, verifiedLinkId: linkId || null, expiresAt: Number(expires) };
  }

  /** The token every form of this session carries. */
  csrfToken(session: PortalSession): Promise<string> {
    return this.#mac.sign(`csrf|${session.nonce}`);
  }

  async csrfValid(session: PortalSession | null, token: unknown): Promise<boolean> {
    if (!session || typeof token !== "string") return false;
    return constantTimeEqual(await this.csrfToken(session), token);
  }
}
