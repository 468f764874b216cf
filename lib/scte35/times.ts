/** 90 kHz clock helpers (SCTE 35 2023 §9.8.1: pts_time and pts_adjustment are 33-bit 90 kHz counts). */
export const PTS_WRAP = 8589934592; // 2^33

/** Seconds from 90 kHz ticks, rounded to the microsecond (ticks × 100 / 9 stays below 2^53 for 40 bits). */
export function seconds(ticks: number): number {
  return Math.round((ticks * 100) / 9) / 1e6;
}

/** (pts_time + pts_adjustment) mod 2^33 (§9.6.1, pts_adjustment semantics). */
export function adjust(ptsTicks: number, adjustmentTicks: number): number {
  return (ptsTicks + adjustmentTicks) % PTS_WRAP;
}

/** GPS epoch 1980-01-06T00:00:00Z in Unix seconds; utc_splice_time counts from it (§9.7.2.1). */
const GPS_EPOCH = 315964800;

export function gpsIso(secs: number): string {
  return new Date((secs + GPS_EPOCH) * 1000).toISOString();
}
