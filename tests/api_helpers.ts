/** Surface A test helpers: a logged-in request, and payee and party bodies of seed 2.3. */
import { basic, type HttpFixture } from "./http_fixture.ts";

export async function api(
  f: HttpFixture,
  method: string,
  path: string,
  body?: unknown,
  as?: { key: string; tin: string },
  headers: Record<string, string> = {},
) {
  const login = await f.app.request("/api/authenticate", {
    method: "POST",
    headers: { Authorization: basic(as?.tin ?? f.cast.acme.tin, as?.key ?? f.cast.alice.keyTest) },
  });
  const { access_token } = await login.json() as { access_token: string };
  return await f.app.request(path, {
    method,
    headers: {
      Authorization: `Bearer ${access_token}`,
      "Content-Type": "application/json",
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

export const payee = (uuid: string, amount: number, extra: Record<string, unknown> = {}) => ({
  payee_type_id: 1,
  amount,
  payee_uuid: uuid,
  email: `${uuid}@example.test`,
  first_name: "Pat",
  last_name: "Doe",
  state: "TX",
  zip_code: "73301",
  allowed_payment_method_ids: [1, 2],
  ...extra,
});

export const parties = [
  {
    party_uuid: "lienholder",
    party_type: "INDIVIDUAL",
    title: "Lienholder",
    Company_name: "First Bank",
    email: "lien@example.test",
    first_name: "Lee",
    last_name: "Holder",
    phone: "5555550101",
  },
  {
    party_uuid: "co-owner",
    party_type: "INDIVIDUAL",
    title: "Co-owner",
    Company_name: "",
    email: "co@example.test",
    first_name: "Cory",
    last_name: "Owner",
    phone: "5555550102",
  },
];

/** Bob of Beacon: another company, for the cross-company cases. */
export const asBeacon = (f: HttpFixture) => ({ key: f.cast.bob.keyTest, tin: f.cast.beacon.tin });
