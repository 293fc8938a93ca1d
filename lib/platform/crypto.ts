/**
 * Secrets that must stay usable (webhook signing secrets, responses that show a secret once) are
 * sealed at rest with AES-256-GCM under the configured ENCRYPTION_KEY, via WebCrypto.
 */
const VERSION = "v1";

const toBase64 = (bytes: Uint8Array): string => bytes.toBase64();
const fromBase64 = (text: string): Uint8Array => Uint8Array.fromBase64(text);

export class SecretBox {
  readonly #macs = new Map<string, PurposeMac>();

  private constructor(private readonly key: CryptoKey, private readonly raw: Uint8Array) {}

  /** A box for a 32-byte key given in base64. */
  static async fromBase64Key(base64Key: string): Promise<SecretBox> {
    const raw = fromBase64(base64Key);
    if (raw.length !== 32) {
      throw new Error(`ENCRYPTION_KEY must decode to 32 bytes, got ${raw.length}`);
    }
    const key = await crypto.subtle.importKey("raw", raw as BufferSource, "AES-GCM", false, [
      "encrypt",
      "decrypt",
    ]);
    return new SecretBox(key, raw);
  }

  /**
   * The key in base64, for a worker of this process that opens and seals with the same key
   * (SecretBox.fromBase64Key); never written anywhere.
   */
  keyForWorker(): string {
    return toBase64(this.raw);
  }

  /**
   * HMAC-SHA256 of `message` under a key derived (HKDF, info = purpose) from ENCRYPTION_KEY,
   * base64url: the same input gives the same MAC, so a row can be found by a secret it must not
   * hold (an account number a notice of change corrects).
   */
  async mac(purpose: string, message: string): Promise<string> {
    let signer = this.#macs.get(purpose);
    if (!signer) {
      signer = new PurposeMac(this.raw, `secret-box:${purpose}`);
      this.#macs.set(purpose, signer);
    }
    return await signer.sign(message);
  }

  /** `v1.<iv>.<ciphertext>`, with a fresh 96-bit IV each time. */
  async seal(plaintext: Uint8Array): Promise<string> {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const sealed = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv },
      this.key,
      plaintext as BufferSource,
    );
    return `${VERSION}.${toBase64(iv)}.${toBase64(new Uint8Array(sealed))}`;
  }

  /** Opens a sealed value; throws when it was altered or sealed under another key. */
  async open(sealed: string): Promise<Uint8Array> {
    const [version, iv, data] = sealed.split(".");
    if (version !== VERSION || !iv || !data) throw new Error("not a sealed value");
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64(iv) as BufferSource },
      this.key,
      fromBase64(data) as BufferSource,
    );
    return new Uint8Array(plain);
  }

  async sealText(text: string): Promise<string> {
    return await this.seal(new TextEncoder().encode(text));
  }

  async openText(sealed: string): Promise<string> {
    return new TextDecoder().decode(await this.open(sealed));
  }
}

/** A webhook signing secret: `whsec_` + base64 of 32 random bytes (contract §8). */
export function newWebhookSecret(): string {
  return `whsec_${toBase64(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/**
 * An HMAC-SHA256 signer derived from the service secret for one purpose (HKDF info), so links,
 * sessions and tokens never share a key.
 */
export class PurposeMac {
  readonly #key: Promise<CryptoKey>;

  constructor(secret: Uint8Array, purpose: string) {
    this.#key = crypto.subtle.importKey("raw", secret as Uint8Array<ArrayBuffer>, "HKDF", false, [
      "deriveKey",
    ]).then((base) =>
      crypto.subtle.deriveKey(
        {
          name: "HKDF",
          hash: "SHA-256",
          salt: new Uint8Array(),
          info: new TextEncoder().encode(purpose),
        },
        base,
        { name: "HMAC", hash: "SHA-256", length: 256 },
        false,
        ["sign"],
      )
    );
  }

  /** The MAC of `message`, base64url without padding. */
  async sign(message: string): Promise<string> {
    const mac = await crypto.subtle.sign(
      "HMAC",
      await this.#key,
      new TextEncoder().encode(message),
    );
    return new Uint8Array(mac).toBase64({ alphabet: "base64url", omitPadding: true });
  }
}
