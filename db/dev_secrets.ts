/**
 * Dev mode as a property of the data directory, and its secrets. `deno task dev` marks the data
 * directory it creates (DATA_DIR/dev-mode) and keeps generated secrets beside it (mode 0600), so a
 * sandbox restarts with the same token key and encryption key. Nothing infers dev mode from
 * missing variables: a directory without the mark is a production one, whose keys come from the
 * environment, and the secrets file is never read or written there.
 */
export interface ServiceSecrets {
  readonly jwtSecret: string;
  readonly encryptionKey: string;
}

/** The file whose presence makes a data directory a dev-mode sandbox. */
export const DEV_MODE_FILE = "dev-mode";

const randomBase64 = (bytes: number): string =>
  btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(bytes))));

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** Whether `deno task dev` made this data directory. */
export function isDevDataDir(dataDir: string): Promise<boolean> {
  return exists(`${dataDir}/${DEV_MODE_FILE}`);
}

/**
 * Marks a data directory for `deno task dev`: one it is creating (no database yet), or a sandbox
 * of an earlier version (it holds the dev secrets file, which only dev mode writes). A directory
 * holding databases without either is a production one and is refused, naming why.
 */
export async function markDevDataDir(
  dataDir: string,
  databaseFiles: readonly string[],
): Promise<string | null> {
  if (await isDevDataDir(dataDir)) return null;
  const holdsDatabases = (await Promise.all(databaseFiles.map(exists))).some(Boolean);
  if (holdsDatabases && !await exists(`${dataDir}/secrets.json`)) {
    return `${dataDir} holds databases that \`deno task dev\` did not create: dev mode never ` +
      "runs on a production data directory (start the service without --dev, or use another DATA_DIR)";
  }
  await Deno.writeTextFile(
    `${dataDir}/${DEV_MODE_FILE}`,
    "This data directory is a dev-mode sandbox made by `deno task dev`.\n",
    { mode: 0o600 },
  );
  return null;
}

/** Reads DATA_DIR/secrets.json, creating it with fresh random secrets when absent (the service only). */
export async function loadOrCreateDevSecrets(dataDir: string): Promise<ServiceSecrets> {
  const stored = await readDevSecrets(dataDir);
  if (stored !== null) return stored;
  const secrets = { jwtSecret: randomBase64(48), encryptionKey: randomBase64(32) };
  await Deno.writeTextFile(`${dataDir}/secrets.json`, JSON.stringify(secrets, null, 2) + "\n", {
    mode: 0o600,
    createNew: true,
  });
  return secrets;
}

/** DATA_DIR/secrets.json as the dev service wrote it, or null when there is none. */
export async function readDevSecrets(dataDir: string): Promise<ServiceSecrets | null> {
  const path = `${dataDir}/secrets.json`;
  try {
    const stored = JSON.parse(await Deno.readTextFile(path)) as Partial<ServiceSecrets>;
    if (typeof stored.jwtSecret === "string" && typeof stored.encryptionKey === "string") {
      return { jwtSecret: stored.jwtSecret, encryptionKey: stored.encryptionKey };
    }
    throw new Error(`${path} is incomplete: delete it to generate new dev secrets`);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}
