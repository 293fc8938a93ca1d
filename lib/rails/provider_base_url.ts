/**
 * The rule of a provider's API base URL (pure): the provider's host of the environment, or a
 * loopback contract server in tests. The test environment never talks to a provider's live host
 * and live never to its sandbox host, so a settings file cannot move real money from the sandbox
 * nor pretend to pay in live.
 */
import { ok, refuse, type Result } from "../platform/result.ts";

/** A provider's two hosts, and how messages name it. */
export interface ProviderHosts {
  readonly name: string;
  readonly live: string;
  readonly sandbox: string;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The base URL (no trailing slash) `raw` gives in `environment`, or why it is refused. */
export function checkProviderBaseUrl(
  raw: string,
  environment: "test" | "live",
  hosts: ProviderHosts,
): Result<string, "invalid_input"> {
  const invalid = (message: string) =>
    refuse("invalid_input", `base_url ${JSON.stringify(raw)}: ${message}`, { field: "base_url" });
  const url = new URL(raw);
  const base = `${url.protocol}//${url.host}`;
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "") {
    return invalid("the host only, without a path");
  }
  // A loopback server (the contract test server) speaks plain HTTP; nothing else may.
  if (LOOPBACK_HOSTS.has(url.hostname)) return ok(base);
  if (url.protocol !== "https:") return invalid(`${hosts.name} is reached over https`);
  const [other, otherName, uses] = environment === "test"
    ? [hosts.live, "live", `the test environment uses ${hosts.sandbox}`]
    : [hosts.sandbox, "sandbox", `live uses ${hosts.live}`];
  if (base === other) return invalid(`${base} is ${hosts.name}'s ${otherName} host: ${uses}`);
  return ok(base);
}
