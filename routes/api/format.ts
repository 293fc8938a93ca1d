/** Shapes shared by Surface A responses. */

/** The seed's timestamp form (seed 2.4): `YYYY-MM-DD HH:MM:SS`, in UTC. */
export function seedTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").slice(0, 19);
}
