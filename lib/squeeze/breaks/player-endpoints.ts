/**
 * Player-facing break endpoints (spec "Player-facing endpoints", "Events"; docs/design.md §3, §6):
 * `GET /vast?stream_id=` answers the VAST 4 document of the break the stream's viewer may be
 * playing (until its end reaches the viewers behind the live edge; `&break_id=`, the ID3 tag's
 * value, names it) with signed beacon URLs only; `/beacon` checks the signature, answers 200 at
 * once and hands the original URL to the de-duplicating forwarder. DAI streams never call /vast:
 * their beacons are fired by the service (./dai-beacons.ts).
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from '../../http/uws.js';
import { Exchange } from '../../http/exchange.js';
import { conditionsOf, sendNegotiated, type Conditions } from '../../http/representation.js';
import { corsOf, type Cors } from '../../http/cors.js';
import { badRequest } from '../../http/problem.js';
import { guardMethods } from '../../http/methods.js';
import { requestIdOf } from '../../http/request-id.js';
import type { Registry } from '../../metrics/index.js';
import { rateLimited, type RateLimiter } from '../../http/rate-limit.js';
import { addressText } from '../../http/uws.js';
import type { Logger } from '../../log/index.js';
import type { StreamRegistry } from '../../streams/registry.js';
import { beaconUrl, verifyBeacon } from '../../ads/beacon.js';
import type { BeaconForwarder } from '../../beacons/forwarder.js';
import { beaconProblem } from '../../beacons/signing.js';
import { writeVast } from '../../ads/vast-writer.js';
import { TRACKING_EVENTS, type DecidedAd } from '../../ads/types.js';
import { adsForStream, type BreakBoard, type LiveAssignment, type LiveBreak } from './board.js';
import { BREAK_ID } from './repo.js';

const STREAM_ID = /^[A-Za-z0-9._:~-]{1,256}$/;
const XML = { 'Content-Type': 'application/xml', 'Cache-Control': 'no-store' };
/** The empty VAST, one buffer for every answer: its gzip form is made once (lib/http/representation.ts). */
const EMPTY = Object.freeze({ status: 200, headers: XML, body: Buffer.from(writeVast([])) });
/** A VAST is no-store and per request: no validators, gzip at level 1 above COMPRESS_MIN_BYTES. */
const PER_REQUEST = Object.freeze({ validators: false as const });
const SHARED = Object.freeze({ validators: false as const, shared: true });
const BEACON_VALID_AFTER_BREAK_SEC = 3600;

export interface PlayerEndpointsDeps {
  board: BreakBoard;
  streams: StreamRegistry;
  forwarder: BeaconForwarder;
  beaconSecret: string;
  /** Absolute base of beacon URLs (PUBLIC_BASE_URL, else the listening address). */
  publicBaseUrl: () => string;
  metrics: Registry;
  log: Logger;
  limiter?: RateLimiter;
  /** CORS for web players (none: no CORS headers). */
  cors?: Cors;
}

export class PlayerEndpoints {
  private readonly beacons;
  private readonly vasts;

  constructor(private readonly deps: PlayerEndpointsDeps) {
    const b = deps.metrics.counter('beacon_requests_total', 'Beacon requests by outcome');
    this.beacons = { accepted: b.with({ outcome: 'accepted' }), rejected: b.with({ outcome: 'rejected' }) };
    const v = deps.metrics.counter('vast_requests_total', 'VAST requests by outcome');
    this.vasts = { ads: v.with({ outcome: 'ads' }), empty: v.with({ outcome: 'empty' }) };
  }

  mount(app: TemplatedApp): void {
    app.get('/vast', (res, req) => this.vast(res, req, false));
    // HEAD: the headers a GET would get (issue 27), e.g. a CDN checking the encoding and length.
    app.head('/vast', (res, req) => this.vast(res, req, true));
    const beacon = (res: HttpResponse, req: HttpRequest) => this.beacon(res, req);
    app.get('/beacon', beacon);
    app.head('/beacon', beacon);
    app.post('/beacon', beacon);
    this.deps.cors?.mountPreflight(app, '/vast', 'GET, HEAD, OPTIONS');
    this.deps.cors?.mountPreflight(app, '/beacon', 'GET, HEAD, POST, OPTIONS');
    guardMethods(app, '/vast', this.deps.cors ? 'GET, HEAD, OPTIONS' : 'GET, HEAD', this.deps.cors);
    guardMethods(app, '/beacon', this.deps.cors ? 'GET, HEAD, POST, OPTIONS' : 'GET, HEAD, POST', this.deps.cors);
  }

  private beacon(res: HttpResponse, req: HttpRequest): void {
    const ex = new Exchange(res, req.getMethod() === 'head', corsOf(this.deps.cors, req), requestIdOf(req));
    if (!this.allowed(ex, res, 'beacon')) return;
    const verdict = verifyBeacon(req.getQuery() ?? '', this.deps.beaconSecret);
    if (!verdict.ok) {
      this.beacons.rejected.inc();
      return void ex.problem(beaconProblem('bad-beacon', `not a beacon this service signed (${verdict.reason})`));
    }
    this.beacons.accepted.inc();
    this.deps.forwarder.enqueue(verdict.beacon);
    // Any request body is not read: the connection closes after the answer.
    ex.unreadBody = req.getMethod() === 'post';
    ex.send(200, { 'Cache-Control': 'no-store', 'Content-Type': 'text/plain' }, '');
  }

  private vast(res: HttpResponse, req: HttpRequest, isHead: boolean): void {
    const ex = new Exchange(res, isHead, corsOf(this.deps.cors, req), requestIdOf(req));
    if (!this.allowed(ex, res, 'vast')) return;
    const query = new URLSearchParams(req.getQuery() ?? '');
    const streamId = query.get('stream_id') ?? '';
    if (!STREAM_ID.test(streamId))
      return void ex.problem(badRequest('stream_id is required (1–256 characters of A-Z a-z 0-9 . _ : ~ -)'));
    // The break the player plays (the value of the ID3 tag it saw), optional.
    const breakId = query.get('break_id') ?? undefined;
    if (breakId !== undefined && !BREAK_ID.test(breakId))
      return void ex.problem(badRequest('break_id, when given, is the break id the ID3 tag carries (a UUID)'));
    const conditions = conditionsOf(req);
    const eventId = this.deps.board.eventOfStream(streamId);
    if (eventId !== undefined) return this.answerVast(ex, streamId, eventId, breakId, conditions);
    // Streams of an event-wide break: their event comes from the stream record.
    this.deps.streams.get(streamId).then(
      (s) => this.answerVast(ex, streamId, s?.event_id ?? undefined, breakId, conditions),
      (err: Error) => {
        this.deps.log.warn({ err: err.message }, '/vast: stream lookup failed; answering an empty VAST');
        this.answerVast(ex, streamId, undefined, breakId, conditions);
      },
    );
  }

  /** The client's token bucket for this endpoint; answers 429 when it is empty. */
  private allowed(ex: Exchange, res: HttpResponse, rule: 'beacon' | 'vast'): boolean {
    const verdict = this.deps.limiter?.take(rule, addressText(res.getRemoteAddressAsText()));
    if (!verdict || verdict.ok) return true;
    ex.problem(rateLimited(verdict.retryAfterSec));
    return false;
  }

  private answerVast(
    ex: Exchange,
    streamId: string,
    eventId: number | undefined,
    breakId: string | undefined,
    conditions: Conditions,
  ): void {
    const found = eventId === undefined ? undefined : this.playing(eventId, streamId, breakId, Date.now());
    if (!found) {
      this.vasts.empty.inc();
      sendNegotiated(ex, EMPTY, conditions, undefined, SHARED);
      return;
    }
    this.vasts.ads.inc();
    // Signed for this break, valid until an hour after it ends.
    const scope = {
      breakId: found.b.id,
      expires: Math.floor(found.b.window.endMs / 1000) + BEACON_VALID_AFTER_BREAK_SEC,
    };
    // The slate filling a shortfall is no ad: it is not offered to the player's VAST.
    const ads = adsForStream(found.b, found.a, streamId).filter((ad) => !ad.slate);
    const body = Buffer.from(writeVast(ads.map((ad) => this.signed(ad, streamId, scope))));
    sendNegotiated(ex, { status: 200, headers: XML, body }, conditions, undefined, PER_REQUEST);
  }

  /**
   * The break a viewer of the stream may be playing now: the named one, else the latest of the
   * event's breaks that assigns the stream ads and is playable (isPlayable).
   */
  private playing(
    eventId: number,
    streamId: string,
    breakId: string | undefined,
    now: number,
  ): { b: LiveBreak; a: LiveAssignment } | undefined {
    const list = this.deps.board.forEvent(eventId) ?? [];
    for (let i = list.length - 1; i >= 0; i--) {
      const b = list[i]!;
      if (breakId !== undefined && b.id !== breakId) continue;
      const a = this.deps.board.assignmentFor(b, streamId);
      if (a && isPlayable(b, now)) return { b, a };
    }
    return undefined;
  }

  /** The ad with every tracking URL replaced by its signed beacon URL: players never see the originals. */
  private signed(ad: DecidedAd, streamId: string, scope: { breakId: string; expires: number }): DecidedAd {
    const tracking: DecidedAd['tracking'] = {};
    for (const event of TRACKING_EVENTS) {
      const urls = ad.tracking[event];
      if (urls?.length)
        tracking[event] = urls.map((url) =>
          beaconUrl(this.deps.publicBaseUrl(), this.deps.beaconSecret, { url, streamId, event, ...scope }),
        );
    }
    return { ...ad, tracking };
  }
}

/**
 * Whether a viewer may be playing the break now: from a minute before it starts until its end
 * reaches the viewers furthest behind the live edge (b.behindMs: the event's live-edge delay and
 * window, bounded; ./board.ts). Not longer: a stranger gets no VAST, and no beacon URLs, for a
 * break no viewer can still be playing.
 */
function isPlayable(b: LiveBreak, now: number): boolean {
  return b.status !== 'failed' && now < b.window.endMs + b.behindMs && now >= b.window.startMs - 60_000;
}
