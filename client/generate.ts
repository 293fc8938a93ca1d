/**
 * `deno task client`: writes the OpenAPI document of the default configuration to
 * client/openapi.json and generates client/schema.d.ts from it with openapi-typescript. Both are
 * committed; tests/client_example_test.ts fails when either is older than the routes.
 */
import { loadConfig } from "../lib/platform/config.ts";
import { openApiDocument } from "../routes/openapi/v1.ts";

/** The generator, pinned: a new version may write other (equally valid) types. */
export const OPENAPI_TYPESCRIPT = "npm:openapi-typescript@7.13.0";

const here = new URL(".", import.meta.url).pathname;
export const documentPath = `${here}openapi.json`;
export const typesPath = `${here}schema.d.ts`;

/** The document as the service serves it with the default limits (secrets do not appear in it). */
export function defaultDocumentText(): string {
  const config = loadConfig({
    DATA_DIR: "data",
    JWT_SECRET: "placeholder-secret-that-is-never-used-to-sign",
    ENCRYPTION_KEY: btoa("k".repeat(32)),
  });
  return JSON.stringify(openApiDocument(config), null, 2) + "\n";
}

/** The types openapi-typescript writes for the document at `source`, into `target`. */
export async function generateTypes(source: string, target: string): Promise<void> {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", OPENAPI_TYPESCRIPT, source, "--output", target],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (code !== 0) {
    throw new Error(`openapi-typescript failed: ${new TextDecoder().decode(stderr)}`);
  }
  const fmt = await new Deno.Command(Deno.execPath(), {
    // The project's line width, also for a file outside it (the freshness test writes one).
    args: ["fmt", "--quiet", "--line-width=100", target],
  }).output();
  if (fmt.code !== 0) throw new Error(`deno fmt failed on ${target}`);
}

if (import.meta.main) {
  await Deno.writeTextFile(documentPath, defaultDocumentText());
  await generateTypes(documentPath, typesPath);
  console.log(`wrote ${documentPath} and ${typesPath}`);
}
