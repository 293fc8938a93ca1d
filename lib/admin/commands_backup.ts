/** The operator commands of Operations: secrets:generate, migrate --check, backup and restore. */
import type { Command } from "./command_kit.ts";

export const backupCommands: Readonly<Record<string, Command>> = {};
