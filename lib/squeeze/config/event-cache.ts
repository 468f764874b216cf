/**
 * The hot path's view of event configs: asset key or caid → EventSettings, in memory, rebuilt
 * from Postgres whenever any instance changes an event (lib/store/reloader.ts). `generation`
 * changes with every rebuild so cached manifests rendered under old settings are not reused.
 */
import { keys, type StateStore } from '../../store/index.js';
import { Reloader } from '../../store/reloader.js';
import type { Logger } from '../../log/index.js';
import { DEFAULT_EVENT_SETTINGS, type EventSettings, type EventSettingsSource } from '../../delivery/event-settings.js';
import type { EventSettingsRow } from './repo.js';

export class EventConfigCache extends Reloader implements EventSettingsSource {
  private byKey = new Map<string, EventSettings>();
  generation = 0;
  private signature = '';

  constructor(
    private readonly load: () => Promise<EventSettingsRow[]>,
    state: StateStore,
    log: Logger,
  ) {
    super(keys.channel('event-config'), state, log, 'event config');
  }

  /** Settings for an asset key or caid, from memory. */
  forAssetKey(key: string | undefined): EventSettings {
    return (key !== undefined && this.byKey.get(key)) || DEFAULT_EVENT_SETTINGS;
  }

  protected async rebuild(): Promise<void> {
    const rows = await this.load();
    // An unchanged set keeps its generation, so the periodic refresh does not empty the manifest cache.
    const signature = JSON.stringify(rows);
    if (signature === this.signature) return;
    this.signature = signature;
    const next = new Map<string, EventSettings>();
    for (const r of rows) {
      const s: EventSettings = {
        eventId: r.id,
        windowSegs: r.windows_segs,
        liveEdgeDelaySegments: r.live_edge_delay_segments,
        assetId: r.asset_id,
        sourceUri: r.source_uri,
        maxConcurrentStreams: r.max_concurrent_streams,
      };
      if (r.content_origin) s.contentOrigin = r.content_origin.replace(/\/+$/, '');
      next.set(r.asset_id, s);
      if (r.caid && !next.has(r.caid)) next.set(r.caid, s);
    }
    this.byKey = next;
    this.generation++;
  }
}
