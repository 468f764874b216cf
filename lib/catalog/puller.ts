/**
 * Scheduled catalog pulls (issue 6). Each feed has a feed_run row; an instance claims a due run
 * (or one whose lease lapsed) with FOR UPDATE SKIP LOCKED, holds it through the shared lease loop
 * (lib/store/lease.ts: renewed on its own clock, handed back on a graceful stop), and commits each
 * page's upsert together with the cursor, fenced on its lease: a crash or a restart
 * resumes from the last committed page, nothing lost, nothing twice.
 * Paging: the feed's `atom:link rel="next"` when present, else offset/limit parameters.
 * Real-time (`stop_when_caughtup`): every run starts at feed_uri and stops at the first page that
 * changes nothing. Backfill: walks to the end, resuming from the saved cursor.
 * A run that follows next links keeps `pagination_params.next_from_feed` (spec: "initially the same
 * as feed_uri, then updated programmatically from the feed's XML next link") as where the next
 * backfill starts: each page stores its next link with the page; a run that ends without an error
 * sets it back to feed_uri (the next run starts at the head), one that fails leaves it at the page
 * that failed.
 */
import { randomBytes } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import type { Agent } from 'undici';
import { request } from 'undici';
import type { Sql } from '../store/index.js';
import type { Logger } from '../log/index.js';
import type { OutboundPolicy } from '../outbound/index.js';
import { MrssReader, type CatalogItem } from './mrss.js';
import type { CatalogRepo } from './repo.js';
import { LeaseLoop } from '../store/lease.js';

const DEFAULT_LEASE_MS = 30_000;
const MAX_PAGES = 1000;
const PAGE_DEADLINE_MS = 10 * 60_000;
const PULL_LIMIT_BYTES = 200 * 1024 * 1024;

interface Run {
  feed_name: string;
  config: FeedSettings;
  mode: string | null;
  page_index: number;
  next_url: string | null;
  first_guid: string | null;
  state_was: string;
}

interface FeedSettings {
  brand_name: string;
  feed_uri: string;
  pagination_supported?: boolean;
  pull_frequency_sec?: number;
  pagination_params: {
    limit?: number | string;
    limit_param?: string;
    offset_base?: number;
    offset_multiplier?: number;
    offset_param?: string;
    stop_when_caughtup?: boolean;
    update_offset_base?: boolean;
    next_from_feed?: string;
  };
}

interface PageResult {
  wrapped: boolean;
  counts: { inserted: number; updated: number; unchanged: number };
  next: string | null;
  count: number;
  firstGuid: string | null;
}

export interface PullerOptions {
  /** Checks each page URL before the transaction opens; the agent checks every connection. */
  policy: OutboundPolicy;
  agent: Agent;
  /** Longest wait for the head or between two reads of a page (default 30 s). */
  timeoutMs?: number;
  /** How long a run stays ours without a renewal (default 30 s). */
  leaseMs?: number;
}

/** How far the offset moves per page (offset units), and how many items a full page holds. */
function offsetStep(p: FeedSettings['pagination_params']): { step: number; pageItems: number } {
  const step = p.offset_multiplier ?? Number(p.limit ?? 0);
  return { step, pageItems: p.limit !== undefined ? Number(p.limit) : step };
}

/**
 * What a page of `count` items consumed, in offset units (issue 25): a full page its whole step; a
 * partial page, when offsets count items (step = page size), the items it held, so the next run
 * starts right after them and items the feed adds there later are pulled; when offsets count pages,
 * nothing (the partial page is read again next time: an upsert, never a skipped item).
 */
export function consumedOffset(p: FeedSettings['pagination_params'], count: number): number {
  const { step, pageItems } = offsetStep(p);
  if (count >= pageItems) return step;
  return step === pageItems ? count : 0;
}

/** The URL of page `index` in offset/limit paging. */
export function offsetPageUrl(c: FeedSettings, index: number): string {
  const p = c.pagination_params;
  const url = new URL(c.feed_uri);
  const offset = (p.offset_base ?? 0) + index * offsetStep(p).step;
  if (p.offset_param) url.searchParams.set(p.offset_param, String(offset));
  if (p.limit_param && p.limit !== undefined) url.searchParams.set(p.limit_param, String(p.limit));
  return url.toString();
}

export class FeedPuller {
  readonly owner = `${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly leaseMs: number;
  private lease: LeaseLoop | undefined;
  private stopped = false;
  pagesFetched = 0;

  constructor(
    private readonly sql: Sql,
    private readonly catalog: CatalogRepo,
    private readonly log: Logger,
    private readonly opts: PullerOptions,
  ) {
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  }

  start(everyMs = 1000): void {
    this.loop(everyMs).start();
  }

  /** Stops claiming, lets the page in flight commit, and hands an unfinished run back (another instance resumes it at once). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop().stop(true);
  }

  /** Claims and runs at most one due feed. */
  tick(): Promise<void> {
    return this.loop().tick();
  }

  private loop(everyMs = 1000): LeaseLoop {
    this.lease ??= new LeaseLoop(
      { name: 'feed pull', ttlMs: this.leaseMs, tickMs: everyMs },
      {
        tick: async () => {
          if (this.stopped) return;
          const run = await this.claim();
          if (run) await this.execute(run);
        },
        renew: () => this.renew(),
        release: () => this.release(),
      },
      this.log,
    );
    return this.lease;
  }

  private async renew(): Promise<string[]> {
    const rows = await this.sql<{ feed_name: string }[]>`
      update feed_run set lease_until = now() + make_interval(secs => ${this.leaseMs / 1000}) where lease_owner = ${this.owner} and state = 'running' returning feed_name`;
    return rows.map((r) => r.feed_name);
  }

  /** The run stays 'running' at its cursor with a lapsed lease, so the next claim resumes it. */
  private async release(): Promise<void> {
    await this
      .sql`update feed_run set lease_owner = null, lease_until = now() - interval '1 millisecond' where lease_owner = ${this.owner} and state = 'running'`;
  }

  private async claim(): Promise<Run | undefined> {
    const [row] = await this.sql<Run[]>`
      with due as (
        select r.feed_name, r.state from feed_run r
        where (r.state = 'idle' and r.next_due_at <= now()) or (r.state = 'running' and r.lease_until < now())
        order by r.next_due_at nulls last limit 1
        for update of r skip locked
      )
      update feed_run r set
        state = 'running', lease_owner = ${this.owner}, lease_until = now() + make_interval(secs => ${this.leaseMs / 1000}),
        started_at = case when due.state = 'idle' then now() else r.started_at end,
        pages = case when due.state = 'idle' then 0 else r.pages end,
        inserted = case when due.state = 'idle' then 0 else r.inserted end,
        updated = case when due.state = 'idle' then 0 else r.updated end,
        unchanged = case when due.state = 'idle' then 0 else r.unchanged end,
        page_index = case when due.state = 'idle' then 0 else r.page_index end,
        first_guid = case when due.state = 'idle' then null else r.first_guid end,
        last_error = null
      from due, feed_config f
      where r.feed_name = due.feed_name and f.feed_name = due.feed_name
      returning r.feed_name, f.config, r.mode, r.page_index, r.next_url, r.first_guid, due.state as state_was`;
    return row;
  }

  private async execute(run: Run): Promise<void> {
    const c = run.config;
    const p = c.pagination_params;
    const realtime = p.stop_when_caughtup === true;
    const byOffset = c.pagination_supported === true && !!p.offset_param;
    let pageIndex = run.page_index;
    // Real-time runs start at the head; backfill resumes from the cursor (or starts at the head).
    let url =
      run.state_was === 'running' && run.next_url
        ? run.next_url
        : byOffset
          ? offsetPageUrl(c, pageIndex)
          : realtime
            ? c.feed_uri
            : (p.next_from_feed ?? c.feed_uri);
    const followsLinks = c.pagination_supported === true && !byOffset;
    if (run.state_was === 'idle' && realtime) pageIndex = 0;
    const visited = new Set<string>();
    // Offset units consumed by this run: the pages a resumed run already committed were full
    // (a partial page ends a run), so they count whole.
    let consumed = pageIndex * offsetStep(p).step;
    let firstGuid = run.first_guid;
    let error: string | null = null;
    try {
      for (let page = 0; page < MAX_PAGES && !this.stopped; page++) {
        if (visited.has(url)) break; // loop guard
        visited.add(url);
        const page_ = await this.pullPage(
          run.feed_name,
          c.brand_name,
          url,
          (count, nextLink) => {
            if (!c.pagination_supported) return null;
            if (byOffset)
              return count && (p.limit === undefined || count >= Number(p.limit))
                ? offsetPageUrl(c, pageIndex + 1)
                : null;
            return nextLink ?? null;
          },
          pageIndex + 1,
          page === 0 && run.state_was === 'idle' ? undefined : firstGuid,
          realtime ? 'realtime' : 'backfill',
          followsLinks ? c.feed_uri : undefined,
        );
        this.pagesFetched++;
        if (!page_) return; // lease lost: another instance owns the run now
        if (page === 0 && run.state_was === 'idle') firstGuid = page_.firstGuid;
        if (page_.wrapped) break; // the feed wrapped around to its first page
        const { counts, next, count } = page_;
        pageIndex++;
        if (byOffset) consumed += consumedOffset(p, count);
        if (!next || count === 0) break;
        if (realtime && counts.inserted + counts.updated === 0) break; // caught up
        url = next;
      }
    } catch (err) {
      error = (err as Error).message;
      this.log.warn({ feed: run.feed_name, err: error }, 'feed pull failed');
    }
    await this.finish(run, c, consumed, error, followsLinks);
  }

  /**
   * Fetches one page and, in one transaction that first checks our lease, upserts its items in
   * chunks as they stream in (memory stays bounded whatever the page size) and moves the cursor,
   * and, when the run follows next links (`feedUri` given), next_from_feed with it.
   * Undefined when the lease is no longer ours.
   */
  private async pullPage(
    feed: string,
    brand: string,
    url: string,
    nextOf: (count: number, nextLink: string | undefined) => string | null,
    pageIndex: number,
    runFirstGuid: string | null | undefined,
    mode: string,
    feedUri: string | undefined,
  ): Promise<PageResult | undefined> {
    this.opts.policy.assertUrl(url);
    return this.sql.begin(async (tx): Promise<PageResult | undefined> => {
      const t = tx as unknown as Sql;
      const [mine] = await t<
        { etag: string | null; last_modified: string | null }[]
      >`select etag, last_modified from feed_run where feed_name = ${feed} and lease_owner = ${this.owner} for update`;
      if (!mine) return undefined;
      // The head page is asked conditionally: an unchanged feed costs one 304.
      const headers: Record<string, string> = {
        accept: 'application/rss+xml, application/atom+xml, application/xml, text/xml',
      };
      const head = pageIndex === 1;
      if (head && mine.etag) headers['if-none-match'] = mine.etag;
      if (head && mine.last_modified) headers['if-modified-since'] = mine.last_modified;
      // A deadline between reads, and a generous one for the whole page: a large page on a busy
      // machine or a slow link is not a stalled one (its size is capped below), a drip-fed one is.
      const idleMs = this.opts.timeoutMs ?? 30_000;
      const res = await request(url, {
        dispatcher: this.opts.agent,
        headersTimeout: idleMs,
        bodyTimeout: idleMs,
        signal: AbortSignal.timeout(PAGE_DEADLINE_MS),
        headers,
      });
      if (res.statusCode === 304 && head) {
        await res.body.dump();
        return {
          wrapped: true,
          counts: { inserted: 0, updated: 0, unchanged: 0 },
          next: null,
          count: 0,
          firstGuid: null,
        };
      }
      const validator = (h: string | string[] | undefined) => (typeof h === 'string' && h.length < 512 ? h : null);
      if (head && res.statusCode === 200)
        await t`update feed_run set etag = ${validator(res.headers['etag'])}, last_modified = ${validator(res.headers['last-modified'])} where feed_name = ${feed}`;
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new Error(`the feed answered ${res.statusCode} for ${url}`);
      }
      let pending: CatalogItem[] = [];
      let count = 0;
      let firstGuid: string | null = null;
      const counts = { inserted: 0, updated: 0, unchanged: 0 };
      const reader = new MrssReader((i) => {
        if (count++ === 0) firstGuid = i.guid;
        pending.push(i);
      });
      const flush = async () => {
        const c = await this.catalog.upsert(brand, pending, t);
        pending = [];
        counts.inserted += c.inserted;
        counts.updated += c.updated;
        counts.unchanged += c.unchanged;
      };
      const decoder = new StringDecoder('utf8');
      let bytes = 0;
      try {
        for await (const chunk of res.body) {
          bytes += (chunk as Buffer).length;
          if (bytes > PULL_LIMIT_BYTES) throw new Error(`the feed page exceeds ${PULL_LIMIT_BYTES} bytes`);
          reader.write(decoder.write(chunk as Buffer));
          if (pending.length >= 500) await flush();
        }
        reader.write(decoder.end());
        reader.close();
      } finally {
        if (!res.body.destroyed) res.body.destroy();
      }
      if (runFirstGuid && firstGuid === runFirstGuid) return { wrapped: true, counts, next: null, count, firstGuid };
      await flush();
      const next = nextOf(count, reader.nextLink ? new URL(reader.nextLink, url).toString() : undefined);
      await t`update feed_run set page_index = ${pageIndex}, next_url = ${next}, first_guid = ${runFirstGuid ?? firstGuid}, mode = ${mode},
        pages = pages + 1, inserted = inserted + ${counts.inserted}, updated = updated + ${counts.updated}, unchanged = unchanged + ${counts.unchanged}
        where feed_name = ${feed}`;
      if (feedUri !== undefined) await setNextFromFeed(t, feed, next ?? feedUri);
      return { wrapped: false, counts, next, count, firstGuid };
    }) as Promise<PageResult | undefined>;
  }

  /** `consumed`: offset units this run's committed pages consumed (offset paging). */
  private async finish(
    run: Run,
    c: FeedSettings,
    consumed: number,
    error: string | null,
    followsLinks: boolean,
  ): Promise<void> {
    const freq = c.pull_frequency_sec ?? 0;
    const retrySec = error ? Math.max(freq, 60) : freq;
    await this.sql.begin(async (tx) => {
      const t = tx as unknown as Sql;
      const [mine] =
        await t`select 1 from feed_run where feed_name = ${run.feed_name} and lease_owner = ${this.owner} for update`;
      if (!mine) return;
      await t`update feed_run set state = 'idle', lease_owner = null, lease_until = null, last_run_at = now(), last_error = ${error},
        next_url = null, next_due_at = ${retrySec > 0 ? t`now() + make_interval(secs => ${retrySec})` : null}
        where feed_name = ${run.feed_name}`;
      if (!error && followsLinks) await setNextFromFeed(t, run.feed_name, c.feed_uri);
      // The base moves by what was consumed, never by a page per run (issue 25: a 7-item feed with
      // limit 3 read 12, 15, 18, 21 on successive runs, and items added later at the skipped offsets
      // were never pulled). Pages committed before an error were consumed too.
      if (consumed > 0 && c.pagination_params.update_offset_base && c.pagination_params.offset_param) {
        const base = (c.pagination_params.offset_base ?? 0) + consumed;
        await t`update feed_config set config = jsonb_set(config, '{pagination_params,offset_base}', ${base}::text::jsonb), updated_at = now() where feed_name = ${run.feed_name}`;
      }
    });
  }
}

/**
 * Stores where the next backfill of a feed starts. Cursor state, not an edit of the configuration:
 * updated_at stays as the last PUT/POST left it.
 */
async function setNextFromFeed(t: Sql, feed: string, url: string): Promise<void> {
  await t`update feed_config set config = jsonb_set(config, '{pagination_params,next_from_feed}', to_jsonb(${url}::text)) where feed_name = ${feed}`;
}
