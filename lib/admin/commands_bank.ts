/** The operator commands of Bank settings and sanctions screening: bank:set and bank:show, ofac:load, and clearing or rejecting a payout held for sanctions review. */
import type { Command } from "./command_kit.ts";

export const bankCommands: Readonly<Record<string, Command>> = {};
