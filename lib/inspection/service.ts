/**
 * ID3 tag inspection (spec "ID3 tag inspection" rules 1–3; "States and transitions"): a request
 * returns the stream's job, starting one when it has none live. What is inspected is decided
 * when the job starts: a pod manifest given by URL (on DAI_HOST or CONTENT_ORIGIN only), else the
 * master playlist or MPD the manifest proxy last served for the stream, fetched from DAI_HOST, else
 * (a stream known only from the ad tag or from /squeezeback: issue 25) its event's configured
 * `source_uri`, the playlist the stream's manifests are made from.
 */
import { invalid, notFound, unprocessable } from '../errors/index.js';
import type { StreamRegistry } from '../streams/registry.js';
import { toView, type InspectionRepo, type InspectionView } from './repo.js';
import type { InspectInput } from './schema.js';

/** The configured source of a stream's event: by its resolved id, else by the asset key it came with. */
export type EventSourceLookup = (
  eventId: number | null,
  assetKey: string | null,
) => Promise<{ eventId: number; sourceUri: string } | undefined>;

export interface InspectionServiceOptions {
  daiHost: string;
  contentOrigin: string;
  eventSource?: EventSourceLookup;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

export class InspectionService {
  private readonly origins: Set<string>;

  constructor(
    private readonly repo: InspectionRepo,
    private readonly streams: StreamRegistry,
    private readonly opts: InspectionServiceOptions,
  ) {
    this.origins = new Set(
      [opts.daiHost, opts.contentOrigin].map((u) => (u ? originOf(u) : undefined)).filter((o): o is string => !!o),
    );
  }

  async request(input: InspectInput): Promise<InspectionView> {
    const live = await this.repo.get(input.stream_id);
    if (live) return toView(live);
    const source =
      input.manifest_url !== undefined
        ? { url: this.podManifest(input.manifest_url), wholePod: true }
        : { url: await this.streamManifest(input.stream_id), wholePod: false };
    return toView(await this.repo.start(input.stream_id, source.url, source.wholePod));
  }

  async get(streamId: string): Promise<InspectionView> {
    const row = await this.repo.get(streamId);
    if (!row) throw notFound(`no ID3 inspection for stream ${streamId} (none was started, or its result expired)`);
    return toView(row);
  }

  /** Origin = scheme, host and port (RFC 6454): anything else could make the service fetch for a caller. */
  private podManifest(url: string): string {
    const origin = originOf(url);
    if (!origin || !this.origins.has(origin))
      throw invalid('manifest_url must be on the DAI host or the content origin', [
        { path: '/manifest_url', message: 'is not on DAI_HOST or CONTENT_ORIGIN' },
      ]);
    return url;
  }

  private async streamManifest(streamId: string): Promise<string> {
    await this.streams.flush(); // include the touches of the last second
    const stream = await this.streams.get(streamId);
    if (!stream)
      throw notFound(
        `stream ${streamId} is not known (or has expired): no ad tag, manifest or /squeezeback request registered it within the idle time`,
      );
    if (stream.master_path) return this.opts.daiHost + stream.master_path;
    const event = await this.opts.eventSource?.(stream.event_id, stream.asset_key);
    if (event) return event.sourceUri;
    throw unprocessable(
      `stream ${streamId} has had no master playlist or MPD proxied, and ${this.missingEvent(stream.event_id, stream.asset_key)}; give manifest_url to inspect a pod manifest`,
    );
  }

  /** What keeps a stream's event (and so its source) from being known. */
  private missingEvent(eventId: number | null, assetKey: string | null): string {
    if (eventId !== null) return `its event ${eventId} no longer exists`;
    if (assetKey !== null)
      return `its asset key ${assetKey.slice(0, 256)} matches no event config (configure the event with that asset_id)`;
    return 'it was registered without an asset_key or caid, so it has no event';
  }
}
