/**
 * Ad creative conditioning (issue 26): the stitcher asks for an ad's renditions matching the
 * content's ladder profile; the first ask queues a job (one per creative and profile across
 * instances, lib/conditioning/repo.ts) and answers "pending" with the job's id, later asks answer
 * the renditions once the worker has written them to the object store. A failed creative answers
 * "failed" until its back-off has passed, then the next ask queues it again.
 *
 * Cache key: the creative is its UniversalAdId (registry and value) when VAST gives a real one, else
 * its progressive media URL's SHA-256 (VAST's Creative@id is not unique across ad servers and may
 * name new media), plus the profile key.
 * Ready renditions are kept in memory after the first read; nothing here runs on the manifest hot path.
 */
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../log/index.js';
import type { Registry } from '../metrics/index.js';
import type { DecidedAd } from '../ads/types.js';
import { probe, ffprobeBeside } from '../transcoder/ffmpeg.js';
import { profileKey, type ConditionedAd, type LadderProfile } from '../stitch/profile.js';
import type { Page } from '../http/envelope.js';
import type { RenditionStore } from './files.js';
import type { CreativeRepo, CreativeRow, Renditions } from './repo.js';
import { transcode } from './transcode.js';
import type { X264Preset } from '../config/schema.js';

export interface ConditioningLimits {
  /** Largest creative fetched (bytes). */
  maxBytes: number;
  /** Longest creative conditioned (seconds, VAST's Duration and the file's). */
  maxDurationSec: number;
  jobTimeoutMs: number;
  /** x264's preset (AD_CONDITIONING_X264_PRESET). */
  preset: X264Preset;
}

export interface ConditioningDeps {
  repo: CreativeRepo;
  files: RenditionStore;
  /** The creative's bytes through the outbound policy, capped at `maxBytes`. */
  fetchBytes(url: string, signal: AbortSignal): Promise<Buffer>;
  ffmpeg: string;
  /** Called when this instance queued a job, so its worker claims it now. */
  queued(): void;
  publicBaseUrl: () => string;
  stitchPath: string;
  log: Logger;
  metrics: Registry;
}

const SOURCE = 'source.mp4';
/** Ready renditions kept in memory (their manifests only); the oldest goes first past this. */
const READY_CACHE = 1000;
const PROBE_MS = 15_000;
/** A stitch waiting for its ads looks at the job's row after this, then twice as long each time, up to POLL_MAX_MS. */
const POLL_FIRST_MS = 100;
const POLL_MAX_MS = 500;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * What identifies a creative's media across ad servers and URLs: its UniversalAdId (a registry such
 * as Ad-ID assigns one per piece of creative, so two ad servers, or one rotating CDN hosts and
 * signed query strings, name the same film), else the media URL, which is all we know of it.
 * The two are prefixed differently so an id can never collide with a URL.
 */
export function creativeKeyOf(ad: Pick<DecidedAd, 'uri' | 'universalAdId'>): string {
  const u = ad.universalAdId;
  return u ? sha256(`uaid\n${u.idRegistry}\n${u.idValue}`) : sha256(ad.uri);
}

export class ConditioningService {
  private readonly ready = new Map<string, ConditionedAd>();
  private readonly queuedCount;

  constructor(
    private readonly deps: ConditioningDeps,
    readonly limits: ConditioningLimits,
  ) {
    this.queuedCount = deps.metrics
      .counter('ad_conditioning_jobs_queued_total', 'Ad creative conditioning jobs queued by this instance')
      .with({});
  }

  /** The public URL of a file of a key's renditions. */
  url(key: string, file: string, base = this.deps.publicBaseUrl()): string {
    return `${base.replace(/\/+$/, '')}/${this.deps.stitchPath}/creatives/${key}/${file}`;
  }

  /**
   * The ad's renditions for the profile, or why not this time (queuing the job when there is none).
   * With `waitUntilMs` (a brand's `stitch_wait_for_ads_ms`, issue 26 part 2) a pending job's row is
   * polled until it is no longer pending or that moment passes, then answered as it is.
   */
  async lookup(ad: DecidedAd, profile: LadderProfile, waitUntilMs = 0): Promise<ConditionedAd> {
    if (ad.durationSec > this.limits.maxDurationSec)
      return {
        state: 'refused',
        detail: `longer (${ad.durationSec} s) than the conditioning cap of ${this.limits.maxDurationSec} s`,
      };
    const creativeKey = creativeKeyOf(ad);
    const pKey = profileKey(profile);
    const key = sha256(`${creativeKey}/${pKey}`);
    const hit = this.ready.get(key);
    if (hit) return hit;
    const ensured = await this.deps.repo.ensure({
      key,
      creativeKey,
      profileKey: pKey,
      profile,
      mediaUrl: ad.uri,
      durationSec: ad.durationSec,
    });
    if (ensured.queued) {
      this.queuedCount.inc();
      this.deps.queued();
    }
    const row =
      ensured.row.state === 'pending' && waitUntilMs > Date.now()
        ? await this.waitFor(ensured.row, waitUntilMs)
        : ensured.row;
    if (row.state === 'pending')
      return {
        state: 'pending',
        job: row.job_id,
        detail: `conditioning job ${row.job_id} is ${row.lease_owner ? 'running' : 'queued'}`,
      };
    if (row.state === 'failed')
      return {
        state: 'failed',
        job: row.job_id,
        detail: `conditioning job ${row.job_id} failed (${row.error ?? 'no reason'}); not retried before ${row.retry_at?.toISOString() ?? 'later'}`,
      };
    const answer = await this.readRenditions(row);
    if (answer.state === 'ready') this.remember(key, answer);
    return answer;
  }

  /**
   * A ready creative's renditions by its key (rendering a stitched session again), named under the
   * public base URL the session was stitched under; not ready or unknown: why not.
   */
  async byKey(key: string, base = this.deps.publicBaseUrl()): Promise<ConditionedAd> {
    const own = base === this.deps.publicBaseUrl();
    const hit = own ? this.ready.get(key) : undefined;
    if (hit) return hit;
    const row = await this.deps.repo.get(key);
    if (!row || row.state !== 'ready') return { state: 'refused', detail: `no ready renditions for ${key}` };
    const answer = await this.readRenditions(row, base);
    if (answer.state === 'ready' && own) this.remember(key, answer);
    return answer;
  }

  private remember(key: string, answer: ConditionedAd): void {
    if (this.ready.size >= READY_CACHE) this.ready.delete(this.ready.keys().next().value!);
    this.ready.set(key, answer);
  }

  /**
   * Polls a pending job's row (any instance's worker may run it) until it is ready or failed, or
   * the deadline: the first look after 100 ms, then at most every POLL_MAX_MS. One indexed row read
   * per look; a read that fails ends the wait with what is known.
   */
  private async waitFor(row: CreativeRow, untilMs: number): Promise<CreativeRow> {
    let step = POLL_FIRST_MS;
    let last = row;
    for (;;) {
      const left = untilMs - Date.now();
      if (left <= 0) return last;
      await new Promise((r) => setTimeout(r, Math.min(step, left)));
      step = Math.min(step * 2, POLL_MAX_MS);
      const now = await this.deps.repo.get(row.key).catch(() => undefined);
      if (!now) return last;
      last = now;
      if (now.state !== 'pending') return now;
    }
  }

  /** The ready renditions' manifests from the object store (absent: this instance does not share the store). */
  private async readRenditions(row: CreativeRow, base = this.deps.publicBaseUrl()): Promise<ConditionedAd> {
    const r = row.renditions!;
    const read = async (name: string) => {
      const b = await this.deps.files.read(row.key, name);
      if (!b) throw new Error(`${name} is missing from this instance's object store`);
      return b.toString('utf8');
    };
    try {
      const manifest = await read(r.manifest);
      const url = this.url(row.key, r.manifest, base);
      if (row.protocol === 'dash') return { state: 'ready', key: row.key, url, mpd: manifest };
      const names = r.files.filter((f) => f.endsWith('.m3u8') && f !== r.manifest);
      const texts = await Promise.all(names.map(read));
      return {
        state: 'ready',
        key: row.key,
        url,
        hls: {
          url,
          master: manifest,
          playlists: new Map(names.map((n, i) => [this.url(row.key, n, base), texts[i]!])),
        },
      };
    } catch (err) {
      return {
        state: 'pending',
        job: row.job_id,
        detail: `conditioning job ${row.job_id} is ready but ${(err as Error).message}`,
      };
    }
  }

  /** The worker's job: fetch (capped), probe, check the caps, transcode, publish. */
  async condition(job: CreativeRow, signal: AbortSignal): Promise<Renditions> {
    const scratch = await this.deps.files.scratch();
    try {
      const bytes = await this.deps
        .fetchBytes(job.media_url, signal)
        .catch((err: Error & { code?: string; declaredBytes?: number }) => {
          // The outbound client's cap: a declared length refused at the headers, else the body cut at the cap.
          if (err.code !== 'too-large' || signal.aborted) throw err;
          const cap = this.limits.maxBytes;
          throw new Error(
            err.declaredBytes
              ? `the creative declares ${err.declaredBytes} bytes, over the cap of ${cap} bytes`
              : `the creative is larger than the cap of ${cap} bytes`,
          );
        });
      const src = path.join(scratch, SOURCE);
      await writeFile(src, bytes);
      const info = await probe(ffprobeBeside(this.deps.ffmpeg), src, PROBE_MS).catch((err: Error) => {
        throw new Error(`the creative is not readable media: ${err.message}`);
      });
      if (!info.video) throw new Error('the creative has no video stream');
      const duration = info.duration ?? info.video.duration ?? 0;
      if (duration > this.limits.maxDurationSec)
        throw new Error(`the creative lasts ${duration} s, over the cap of ${this.limits.maxDurationSec} s`);
      const out = await transcode(
        this.deps.ffmpeg,
        job.profile,
        src,
        info,
        scratch,
        this.limits.jobTimeoutMs,
        signal,
        this.limits.preset,
      );
      const files = await this.deps.files.publish(scratch, job.key, (n) => n !== SOURCE && !n.endsWith('.tmp'));
      return {
        manifest: out.manifest,
        files,
        rungs: job.profile.rungs.map(({ width, height, bandwidth }) => ({ width, height, bandwidth })),
        seconds_to_ready: Math.round((Date.now() - new Date(job.queued_at).getTime()) / 100) / 10,
      };
    } catch (err) {
      await this.deps.files.discard(scratch).catch(() => undefined);
      throw err;
    }
  }

  async list(page: number, pageSize: number, state?: CreativeRow['state']): Promise<Page<CreativeView>> {
    const { rows, total } = await this.deps.repo.list(page, pageSize, state);
    return { results: rows.map((r) => this.view(r)), total_results: total };
  }

  view(r: CreativeRow): CreativeView {
    const v: CreativeView = {
      id: r.key,
      key: r.key,
      creative_key: r.creative_key,
      media_url: r.media_url,
      duration_sec: r.duration_sec,
      protocol: r.protocol,
      state: r.state,
      job_id: r.job_id,
      attempts: r.attempts,
      failures: r.failures,
      profile: { key: r.profile_key, ...r.profile },
      renditions: r.renditions,
      created: r.created_at.toISOString(),
      queued: r.queued_at.toISOString(),
      updated: r.updated_at.toISOString(),
    };
    if (r.renditions) v.url = this.url(r.key, r.renditions.manifest);
    if (r.ready_at) v.ready = r.ready_at.toISOString();
    if (r.error) v.error = r.error;
    if (r.retry_at && r.state === 'failed') v.retry_at = r.retry_at.toISOString();
    return v;
  }
}

export interface CreativeView {
  /** The resource's key as every resource answers it (issue 25 item 7): the same value as `key`. */
  id: string;
  key: string;
  creative_key: string;
  media_url: string;
  duration_sec: number;
  protocol: 'hls' | 'dash';
  state: CreativeRow['state'];
  job_id: string;
  attempts: number;
  failures: number;
  profile: LadderProfile & { key: string };
  renditions: Renditions | null;
  url?: string;
  created: string;
  queued: string;
  updated: string;
  ready?: string;
  error?: string;
  retry_at?: string;
}
