/**
 * A fetch that connects only to addresses already checked, closing the DNS-rebinding window
 * between the SSRF check and the connection: the host name still goes in the Host header and the
 * TLS server name (so certificates verify as usual), but no second DNS lookup happens. Deno's
 * fetch cannot override resolution, so this rides on node:http(s) and its `lookup` hook.
 */
import type { LookupAddress } from "node:dns";

/** Node's HTTP client is loaded at the first delivery, not at every start of the service. */
const loadTransports = () =>
  Promise.all([import("node:http"), import("node:https"), import("node:stream")]);

type Lookup = (
  hostname: string,
  options: { all?: boolean },
  callback: (...args: unknown[]) => void,
) => void;

/** Statuses whose responses have no body by definition. */
const bodiless = new Set([101, 103, 204, 205, 304]);

export function pinnedFetch(addresses: readonly string[]) {
  const pinned: LookupAddress[] = addresses.map((address) => ({
    address,
    family: address.includes(":") ? 6 : 4,
  }));
  const lookup: Lookup = (_hostname, options, callback) => {
    if (options.all) callback(null, pinned);
    else callback(null, pinned[0].address, pinned[0].family);
  };
  return async (
    url: string,
    init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal },
  ): Promise<Response> => {
    const [{ default: http }, { default: https }, { Readable }] = await loadTransports();
    return new Promise((resolve, reject) => {
      const target = new URL(url);
      const transport = target.protocol === "https:" ? https : http;
      const request = transport.request(target, {
        method: init.method,
        headers: init.headers,
        lookup: lookup as never,
      }, (response) => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) {
            headers.set(name, Array.isArray(value) ? value.join(", ") : value);
          }
        }
        const status = response.statusCode ?? 502;
        const body = bodiless.has(status)
          ? null
          : Readable.toWeb(response) as unknown as ReadableStream<Uint8Array>;
        if (!body) response.resume();
        try {
          resolve(new Response(body, { status, headers }));
        } catch (error) {
          // A status outside 200-599 cannot be a Response: the attempt failed.
          response.destroy();
          reject(error);
        }
      });
      // The timeout covers the whole exchange, reading the answer included, as with fetch.
      const abort = () => {
        const reason = init.signal.reason ?? new Error("aborted");
        request.destroy(reason);
        reject(reason);
      };
      if (init.signal.aborted) return abort();
      init.signal.addEventListener("abort", abort, { once: true });
      request.on("close", () => init.signal.removeEventListener("abort", abort));
      request.on("error", reject);
      request.end(init.body);
    });
  };
}
