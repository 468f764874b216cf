/**
 * Last-Modified for VOD answers of `/dai/manifest` and `/squeezeback` (EXT-X-ENDLIST playlists,
 * static MPDs; issue 27; docs/decisions.md "Issue 27 (rest)" and "Issue 27 (cache table)"). A rendering is re-made every second
 * or so (the micro-cache), but its date must name its body version, and a changed body must never
 * get a date a client's If-Modified-Since could match:
 *
 * - A body version is known by a digest of its bytes, per upstream URL. While the digest holds, its
 *   date holds.
 * - A new version is dated by the upstream's Last-Modified when it sent one, but never earlier than
 *   the moment this instance first saw the state that shaped it (the event settings and breaks
 *   generations): a trim or a break changes the body while the upstream's date stays. Without an
 *   upstream date, the time this instance first made the version.
 * - A new version's date is always later than every date stated for that URL before (within this
 *   instance's memory); when it cannot be (two versions in one second), it goes out with no
 *   Last-Modified (its ETag still validates it).
 */
import crypto from 'node:crypto';
import type { FormOptions } from '../http/representation.js';
import type { Rendered } from './manifest-cache.js';

interface Version {
  digest: string;
  /** Seconds since the epoch; undefined: stated without a Last-Modified. */
  sec: number | undefined;
  /** The latest date ever stated for this URL, this version's included. */
  high: number;
}

const MAX_URLS = 10_000;

export class VodDates {
  private readonly versions = new Map<string, Version>();
  private stateSince: number;

  /** events, breaks: the generations of the state as it is now (its changes are dated from here on). */
  constructor(
    private events: number,
    private breaks: number,
    now = Date.now(),
  ) {
    this.stateSince = now;
  }

  /**
   * The Last-Modified (ms since the epoch, whole seconds) of a VOD body of url, or undefined.
   * events, breaks: the generations of the state it was rendered under.
   */
  dateOf(
    url: string,
    body: Uint8Array,
    upstreamMs: number | undefined,
    events: number,
    breaks: number,
    now = Date.now(),
  ): number | undefined {
    if (events !== this.events || breaks !== this.breaks) {
      // Seen now, later than it happened: a later date only costs a 200, never a wrong 304.
      this.stateSince = now;
      this.events = events;
      this.breaks = breaks;
    }
    const digest = crypto.createHash('sha1').update(body).digest('base64url');
    const prev = this.versions.get(url);
    if (prev?.digest === digest) return prev.sec === undefined ? undefined : prev.sec * 1000;
    const nowSec = Math.floor(now / 1000);
    let sec: number | undefined =
      upstreamMs === undefined ? nowSec : Math.floor(Math.max(upstreamMs, this.stateSince) / 1000);
    if (prev && sec <= prev.high) sec = nowSec > prev.high ? nowSec : undefined;
    if (!prev && this.versions.size >= MAX_URLS) this.versions.clear();
    this.versions.set(url, { digest, sec, high: Math.max(prev?.high ?? 0, sec ?? 0) });
    return sec === undefined ? undefined : sec * 1000;
  }
}

/** A micro-cached rendering is shared by every client of its URL: compressed once, at level 6. */
export const SHARED: FormOptions = Object.freeze({ shared: true });

/** Whatever has a generation that changes with the state it stands for (event settings, breaks). */
interface Generation {
  readonly generation: number;
}

/**
 * The form options (lib/http/representation.ts) of the micro-cached renderings of one delivery
 * path: SHARED, and for a VOD rendering its Last-Modified too. Decided at a rendering's first
 * answer, which builds its forms, and kept with it (a WeakMap), so a live rendering costs one
 * property read and a VOD one a map lookup per answer.
 */
export class VodForms {
  private readonly dates: VodDates;
  private readonly options = new WeakMap<Rendered, FormOptions>();

  constructor(
    private readonly events: Generation,
    private readonly breaks: Generation | undefined,
  ) {
    this.dates = new VodDates(events.generation, breaks?.generation ?? 0);
  }

  /** key: what names the body's versions (the upstream URL, and the break rendering it got when there are several). */
  of(r: Rendered, key: string): FormOptions {
    if (r.vod !== true) return SHARED;
    let o = this.options.get(r);
    if (!o) {
      const lastModified = this.dates.dateOf(
        key,
        r.body,
        r.upstreamLastModified,
        this.events.generation,
        this.breaks?.generation ?? 0,
      );
      o = lastModified === undefined ? SHARED : Object.freeze({ shared: true, lastModified });
      this.options.set(r, o);
    }
    return o;
  }
}
