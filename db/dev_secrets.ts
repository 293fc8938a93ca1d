/**
 * Secrets for dev mode: generated once and kept under DATA_DIR (mode 0600), so a sandbox
 * restarts with the same token key and encryption key. Outside dev mode they come from the
 * environment and this file is never read.
 */
export interface ServiceSecrets {
  readonly jwtSecret: string;
  readonly encryptionKey: string;
}

const randomBase64 = (bytes: number): string =>
  btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(bytes))));

/** Reads DATA_DIR/secrets.json, creating it with fresh random secrets when absent. */
export async function loadOrCreateDevSecrets(dataDir: string): Promise<ServiceSecrets> {
  const path = `${dataDir}/secrets.json`;
  try {
    const stored = JSON.parse(await Deno.readTextFile(path)) as Partial<ServiceSecrets>;
    if (typeof stored.jwtSecret === "string" && typeof stored.encryptionKey === "string") {
      return { jwtSecret: stored.jwtSecret, encryptionKey: stored.encryptionKey };
    }
    throw new Error(`${path} is incomplete: delete it to generate new dev secrets`);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const secrets = { jwtSecret: randomBase64(48), encryptionKey: randomBase64(32) };
  await Deno.writeTextFile(path, JSON.stringify(secrets, null, 2) + "\n", {
    mode: 0o600,
    createNew: true,
  });
  return secrets;
}
