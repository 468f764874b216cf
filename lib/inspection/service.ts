/**
 * ID3 tag inspection (spec "ID3 tag inspection" rules 1–3; "States and transitions"): a request
 * returns the stream's job, starting one when it has none live. What is inspected is decided
 * when the job starts: a pod manifest given by URL (on DAI_HOST or CONTENT_ORIGIN only), else the
 * master playlist or MPD the manifest proxy last served for the stream, fetched from DAI_HOST.
 */
import { invalid, notFound } from '../errors/index.js';
import type { StreamRegistry } from '../streams/registry.js';
import { toView, type InspectionRepo, type InspectionView } from './repo.js';
import type { InspectInput } from './schema.js';

export interface InspectionServiceOptions {
  daiHost: string;
  contentOrigin: string;
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
    this.origins = new Set([opts.daiHost, opts.contentOrigin].map((u) => (u ? originOf(u) : undefined)).filter((o): o is string => !!o));
  }

  async request(input: InspectInput): Promise<InspectionView> {
    const live = await this.repo.get(input.stream_id);
    if (live) return toView(live);
    const source = input.manifest_url !== undefined ? { url: this.podManifest(input.manifest_url), wholePod: true } : { url: await this.streamManifest(input.stream_id), wholePod: false };
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
    if (!origin || !this.origins.has(origin)) throw invalid('manifest_url must be on the DAI host or the content origin', [{ path: '/manifest_url', message: 'is not on DAI_HOST or CONTENT_ORIGIN' }]);
    return url;
  }

  private async streamManifest(streamId: string): Promise<string> {
    await this.streams.flush(); // include the touches of the last second
    const stream = await this.streams.get(streamId);
    if (!stream) throw notFound(`stream ${streamId} is not known (or has expired)`);
    if (!stream.master_path) throw notFound(`stream ${streamId} has had no master playlist or MPD proxied yet; give manifest_url to inspect a pod manifest`);
    return this.opts.daiHost + stream.master_path;
  }
}
