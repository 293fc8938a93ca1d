/**
 * The service's ed25519 key for webhook signatures, one per environment: derived from the
 * encryption key (never stored), so every node of an installation signs with the same key and a
 * receiver pins one public key, shown as Standard Webhooks writes it (`whpk_` and base64). The
 * keys' module (Node's crypto) is imported at the first signature: it is not loaded before the
 * service's first answer.
 */
import type { Ed25519Keys } from "../audit/anchor.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";

const PURPOSE = "webhook-ed25519-v1";
const derived = new WeakMap<SecretBox, Map<Environment, Promise<Ed25519Keys>>>();

/** The environment's webhook signing keys, derived once per process. */
export function webhookSigningKeys(
  secretBox: SecretBox,
  environment: Environment,
): Promise<Ed25519Keys> {
  let byEnvironment = derived.get(secretBox);
  if (!byEnvironment) derived.set(secretBox, byEnvironment = new Map());
  let keys = byEnvironment.get(environment);
  if (!keys) {
    keys = Promise.all([secretBox.mac(PURPOSE, environment), import("../audit/anchor.ts")])
      .then(([mac, { ed25519KeysOfSeed }]) =>
        ed25519KeysOfSeed(Uint8Array.fromBase64(mac, { alphabet: "base64url" }))
      );
    byEnvironment.set(environment, keys);
  }
  return keys;
}

/** The public key as receivers configure it: `whpk_` and the base64 of its 32 bytes. */
export async function webhookPublicKey(
  secretBox: SecretBox,
  environment: Environment,
): Promise<string> {
  const [{ publicKey }, { rawPublicKey }] = await Promise.all([
    webhookSigningKeys(secretBox, environment),
    import("../audit/anchor.ts"),
  ]);
  return `whpk_${rawPublicKey(publicKey).toBase64()}`;
}
