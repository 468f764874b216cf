/**
 * A simulated MRSS feed host for tests and demos: a catalog of items served newest first, paged
 * either by `atom:link rel="next"` (`/next.rss?page=N`) or by offset/limit parameters
 * (`/offset.rss?offset=&limit=`). Items can be added at the head to model a live catalog, or
 * appended at the tail to model a feed ordered oldest first (where offset paging with
 * `update_offset_base` makes sense), also while a run is reading it (`beforeAnswer`).
 */
import http from 'node:http';

export interface SimItem {
  guid: string;
  title: string;
  /** The item's own XML (e.g. from a real feed); generated when absent. */
  xml?: string;
}

export class FeedHostSim {
  /** Newest first. */
  items: SimItem[] = [];
  /** Namespace declarations for the channel, when the items come from a real feed. */
  namespaces = 'xmlns:media="http://search.yahoo.com/mrss/" xmlns:atom="http://www.w3.org/2005/Atom"';
  pageSize = 10;
  /** Milliseconds to hold each answer after the first page (to catch a run mid-way). */
  delayMs = 0;
  /** Paths with their query (`/next.rss?page=2`) answered 503, to fail a run mid-way. */
  readonly failing = new Set<string>();
  readonly requests: string[] = [];
  /** Called with each request's path and query before it is answered (e.g. to grow the feed mid-run). */
  beforeAnswer: ((pathAndQuery: string) => void) | undefined;
  url = '';
  private server: http.Server | undefined;

  constructor(count: number) {
    for (let i = count; i >= 1; i--) this.items.push({ guid: `item-${i}`, title: `Item ${i}` });
  }

  /** Serves the items of a real RSS document (its <item> elements, in order), paged both ways. */
  static fromFeed(xml: string): FeedHostSim {
    const sim = new FeedHostSim(0);
    const rss = /<rss\b([^>]*)>/.exec(xml)?.[1] ?? '';
    sim.namespaces =
      `${rss.replace(/\bversion="[^"]*"/, '')} ${rss.includes('xmlns:atom') ? '' : 'xmlns:atom="http://www.w3.org/2005/Atom"'}`.trim();
    for (const m of xml.matchAll(/<item\b[\s\S]*?<\/item>/g)) {
      const guid = /<guid[^>]*>([^<]*)<\/guid>/.exec(m[0])?.[1] ?? /<link>([^<]*)<\/link>/.exec(m[0])?.[1] ?? '';
      sim.items.push({ guid, title: '', xml: m[0] });
    }
    return sim;
  }

  add(n: number): void {
    const top = this.items.length;
    for (let i = 1; i <= n; i++) this.items.unshift({ guid: `item-${top + i}`, title: `Item ${top + i}` });
  }

  /** Adds n items at the tail (the newest last, as a feed ordered oldest first grows). */
  append(n: number): void {
    const top = this.items.length;
    for (let i = 1; i <= n; i++) this.items.push({ guid: `item-${top + i}`, title: `Item ${top + i}` });
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://sim');
      this.requests.push(u.pathname + u.search);
      this.beforeAnswer?.(u.pathname + u.search);
      if (this.failing.has(u.pathname + u.search)) {
        res.writeHead(503).end();
        return;
      }
      let slice: SimItem[];
      let next = '';
      if (u.pathname === '/next.rss') {
        const page = Number(u.searchParams.get('page') ?? 0);
        slice = this.items.slice(page * this.pageSize, (page + 1) * this.pageSize);
        if ((page + 1) * this.pageSize < this.items.length)
          next = `<atom:link rel="next" href="${this.url}/next.rss?page=${page + 1}"/>`;
      } else if (u.pathname === '/offset.rss') {
        const offset = Number(u.searchParams.get('offset') ?? 0);
        const limit = Number(u.searchParams.get('limit') ?? this.pageSize);
        slice = this.items.slice(offset, offset + limit);
      } else {
        res.writeHead(404).end();
        return;
      }
      const body = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" ${this.namespaces}><channel><title>sim</title>${next}
${slice.map((i) => i.xml ?? `<item><guid>${i.guid}</guid><title>${i.title}</title><media:content url="https://cdn.example.com/${i.guid}/master.m3u8" type="application/x-mpegURL"/></item>`).join('\n')}
</channel></rss>`;
      const etag = `"${this.items.length}-${u.search}"`;
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304).end();
        return;
      }
      const first = !u.searchParams.get('page') || u.searchParams.get('page') === '0';
      const send = () => res.writeHead(200, { 'content-type': 'application/rss+xml', etag }).end(body);
      if (this.delayMs && !first) setTimeout(send, this.delayMs);
      else send();
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  stop(): Promise<void> {
    return new Promise((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
