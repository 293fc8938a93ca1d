/**
 * A bank file's kept content is handed out (to the bank, or to an operator who downloads it) only
 * when it is the very file its build checked: the SHA-256 the build took of it.
 */
import { sha256Hex } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";

/**
 * The content `open` unseals, when its SHA-256 is `builtSha256`; otherwise throws, naming the file
 * (`label`, "ACH file rbt_…"): content altered, sealed under another key, or cut short.
 */
export async function openAsBuilt<T extends string | Uint8Array>(
  label: string,
  open: () => Promise<T>,
  builtSha256: string,
): Promise<T> {
  let content: T;
  try {
    content = await open();
  } catch (error) {
    throw new Error(
      `${label} could not be unsealed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const sha256 = await sha256Hex(content);
  if (sha256 !== builtSha256) {
    throw new Error(
      `${label} is not the file its build checked: its SHA-256 is ${sha256}, the build's ${builtSha256}`,
    );
  }
  return content;
}

/**
 * A kept file opened for a download, or refused with `code` (field "file") when `open` finds it
 * is not the file as built: refused before anything is recorded, so nothing was handed out.
 */
export async function openedForDownload<T, C extends string>(
  open: () => Promise<T>,
  code: C,
): Promise<Result<T, C>> {
  try {
    return ok(await open());
  } catch (error) {
    return refuse(
      code,
      `${error instanceof Error ? error.message : String(error)}; nothing was handed out`,
      { field: "file" },
    );
  }
}
