/** PayPal settings commands (issue 19): paypal:set, paypal:show. Not built yet. */
import type { Command } from "./command_kit.ts";

export const paypalCommands: Readonly<Record<string, Command>> = {};
