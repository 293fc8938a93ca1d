/** The operator commands of ACH files: listing, showing, downloading, marking sent, voiding, resolving in-doubt files and importing returns and notices of change (lib/ach). */
import type { Command } from "./command_kit.ts";

export const achCommands: Readonly<Record<string, Command>> = {};
