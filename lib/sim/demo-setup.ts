/**
 * What `npm run demo` configures through the management API, as an operator would: a squeeze
 * brand (background, frames, animations), an event on the live origin whose SCTE-35 cues start
 * breaks, and curated ads on the ad server. Also the cue schedule written into the origin's
 * playlist. The browser tests configure their service the same way.
 */
import type { Dispatcher } from 'undici';
import { OutboundClient } from '../outbound/client.js';
import { OutboundPolicy } from '../outbound/policy.js';
import { spliceInsert } from './scte35-encode.js';
import type { CueOriginSim } from './cue-origin.js';

export const DEMO_BRAND = 'acme';
export const DEMO_ASSET = 'demo';
/** The origin's channel: `/<channel>/master.m3u8`. */
export const DEMO_CHANNEL = 'live';

export interface DemoSetup {
  /** The service's base URL and an operator token. */
  baseUrl: string;
  token: string;
  originUrl: string;
  /** Ads as the ad server serves them: their MP4 URL and duration. */
  ads: Array<{ id: string; uri: string; durationSec: number }>;
  /** Background PNG URL (optional). */
  backgroundUri?: string;
  trigger?: 'api' | 'scte35';
}

export interface DemoEvent {
  id: number;
  asset_id: string;
}

/** The management API of the service being configured, through the outbound client, trusting that one host. */
function apiClient(setup: DemoSetup): OutboundClient {
  return new OutboundClient(new OutboundPolicy({ allowPrivate: false, trusted: [setup.baseUrl] }), {
    timeoutMs: 10_000,
  });
}

async function call(
  api: OutboundClient,
  setup: DemoSetup,
  method: Dispatcher.HttpMethod,
  path: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { Authorization: `Bearer ${setup.token}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await api.exchange(
    method,
    `${setup.baseUrl}/api/v1${path}`,
    AbortSignal.timeout(10_000),
    body === undefined ? { headers } : { headers, body: JSON.stringify(body) },
  );
  if ((res.status < 200 || res.status >= 300) && res.status !== 409)
    throw new Error(`${method} /api/v1${path} answered ${res.status}: ${res.text.slice(0, 500)}`);
  return (res.text ? JSON.parse(res.text) : {}) as Record<string, unknown>;
}

/** Configures brand, event and curated ads (idempotent: a second run on the same database changes nothing). */
export async function configureDemo(setup: DemoSetup): Promise<DemoEvent> {
  const api = apiClient(setup);
  try {
    return await configureWith(api, setup);
  } finally {
    await api.close();
  }
}

async function configureWith(api: OutboundClient, setup: DemoSetup): Promise<DemoEvent> {
  const frame = { enabled: true, thickness_px: 4, color: 'white@0.85' };
  await call(api, setup, 'PUT', '/squeeze-brand-config', {
    brand_id: DEMO_BRAND,
    layout: 'dualbox',
    sqz_ratios: { content_box: 0.58, ad_box: 0.36 },
    positions: { content_box: { x: 0.03, y: 0.2 }, ad_box: { x: 0.62, y: 0.34 } },
    animations: { in_sec: 2, out_sec: 2 },
    frames: { content_box: frame, ad_box: { ...frame, color: 'yellow@0.9' } },
    ...(setup.backgroundUri ? { background_uri: setup.backgroundUri } : {}),
  });
  const event = (await call(api, setup, 'PUT', '/squeeze-event-config', {
    asset_id: DEMO_ASSET,
    source_uri: `${setup.originUrl}/${DEMO_CHANNEL}/master.m3u8`,
    brand_config_id: DEMO_BRAND,
    trigger: setup.trigger ?? 'scte35',
    // Players see the origin's window two segments behind its edge: the transcoder composes a break
    // segment in that time, so a player never sees it first as content and then swapped (hls.js
    // stops on a media sequence whose URI changed).
    windows_segs: 10,
    live_edge_delay_segments: 2,
  })) as unknown as DemoEvent;
  for (const [i, ad] of setup.ads.entries()) {
    const fields = { ad_uri: ad.uri, duration: ad.durationSec, is_curated: true };
    const abid = `demo-${i + 1}`;
    const created = await call(api, setup, 'PUT', '/squeeze-configured-ad', { event_id: event.id, abid, ...fields });
    if (created['id'] !== undefined) continue;
    // There from an earlier run (409): the ad server listens on another port now.
    const found = (await call(
      api,
      setup,
      'GET',
      `/squeeze-configured-ad?event_id=${event.id}&abid=${abid}`,
      undefined,
    )) as { results?: Array<{ id: number }> };
    const id = found.results?.[0]?.id;
    if (id !== undefined) await call(api, setup, 'POST', '/squeeze-configured-ad', { id, ...fields });
  }
  return event;
}

export interface CueSchedule {
  firstSeq: number;
  everySegments: number;
  breakSegments: number;
  count: number;
}

/**
 * Writes cue-outs into the origin's playlist: `count` breaks of `breakSegments` segments, every
 * `everySegments` from `firstSeq`, each an EXT-OATCLS-SCTE35 splice_insert with EXT-X-CUE-OUT,
 * CONT tags, then EXT-X-CUE-IN. Answers the media sequences where they start.
 */
export function scheduleCues(origin: CueOriginSim, channel: string, s: CueSchedule): number[] {
  const starts: number[] = [];
  const sec = origin.segmentSec;
  const duration = s.breakSegments * sec;
  for (let k = 0; k < s.count; k++) {
    const seq = s.firstSeq + k * s.everySegments;
    const pts = (seq * sec) % 90_000; // seconds, within the 33-bit 90 kHz clock; the monitor keys cues by it
    origin.cue(
      channel,
      seq,
      `#EXT-OATCLS-SCTE35:${spliceInsert(1000 + k, pts, { durationSec: duration }).toString('base64')}`,
      `#EXT-X-CUE-OUT:${duration}`,
    );
    for (let i = 1; i < s.breakSegments; i++)
      origin.cue(channel, seq + i, `#EXT-X-CUE-OUT-CONT:ElapsedTime=${i * sec},Duration=${duration}`);
    origin.cue(channel, seq + s.breakSegments, '#EXT-X-CUE-IN');
    starts.push(seq);
  }
  return starts;
}
