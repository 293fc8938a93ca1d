/** What the bank-settings tests share: a valid settings file to change one field of. */

/** A complete, valid live settings file; tests change one field at a time. */
export function validSettingsJson(): Record<string, unknown> {
  return {
    immediate_destination: "021000021",
    immediate_destination_name: "FIRST EXAMPLE BANK",
    immediate_origin: "1555555555",
    immediate_origin_name: "CEDAR RE",
    odfi_routing: "021000021",
    company_identification: "1555555555",
    company_name: "CEDAR RE",
    funding_account: {
      routing_number: "011000015",
      account_number: "123456789012",
      account_type: "checking",
      name: "CEDAR RE OPERATING",
    },
    settlement_account: {
      routing_number: "021000021",
      account_number: "9876543210",
      account_type: "checking",
      name: "CEDAR RE SETTLEMENT",
    },
    balanced_file: true,
    cutoffs: [{ time: "16:00", kind: "next_day" }, { time: "10:30", kind: "same_day" }],
    sftp: null,
  };
}
