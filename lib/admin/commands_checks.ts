/** Check register commands (issue 19): checks:list, checks:files, checks:download, checks:void, checks:import-paid. Not built yet. */
import type { Command } from "./command_kit.ts";

export const checkCommands: Readonly<Record<string, Command>> = {};
