/**
 * Surface A ACH files: GET /api/ach/files and GET /api/ach/files/{id}, metadata and masked
 * entries only (full content is for admin operators). CONTRACT STUB: owned by the API helper.
 */
import { Hono } from "hono";
import type { AppDeps, AppEnv } from "../context.ts";

export function achFileRoutes(_deps: AppDeps): Hono<AppEnv> {
  return new Hono<AppEnv>();
}
