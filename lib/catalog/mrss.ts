/**
 * The one streaming Media RSS reader for push and pull (saxes; xmldom stays for VAST/VMAP).
 * RSS 2.0 items and Atom entries; Media RSS 1.5.1 precedence media:content > media:group > item > channel;
 * cue points from dfpvideo:cuepoints (seconds), jwplayer:cuepoints (HH:MM:SS.xx) and
 * ad:cuepoints (ms). Namespace prefixes are matched by name, so undeclared prefixes are tolerated.
 * A DOCTYPE, malformed XML or a cap exceeded is an MrssError: nothing of the feed is used.
 */
import { createHash } from 'node:crypto';
import { SaxesParser, type SaxesTagPlain } from 'saxes';

export class MrssError extends Error {
  override name = 'MrssError';
}

export interface Rendition {
  url: string;
  type: string;
  kind: 'hls' | 'dash' | 'mp4' | 'other';
  bitrate?: number;
  width?: number;
  height?: number;
  duration?: number;
}

export interface CatalogItem {
  guid: string;
  /** `dfpvideo:contentId` when the item has one besides its guid (the stitching flow finds an asset by either). */
  content_id?: string;
  title: string;
  description: string;
  published: string | null;
  duration: number | null;
  renditions: Rendition[];
  thumbnails: string[];
  cue_points: number[];
  extras: Record<string, string>;
  content_hash: string;
}

export interface MrssLimits {
  maxItems: number;
  maxItemChars: number;
  maxDepth: number;
}

export const defaultLimits: MrssLimits = { maxItems: 50_000, maxItemChars: 1_000_000, maxDepth: 64 };

interface Draft {
  guid?: string;
  contentId?: string;
  link?: string;
  title?: string;
  mediaTitle?: string;
  description?: string;
  mediaDescription?: string;
  published?: string;
  duration?: number;
  renditions: Rendition[];
  groupRenditions: Rendition[];
  thumbnails: string[];
  cuePoints: number[];
  extras: Record<string, string>;
  chars: number;
}

const local = (name: string) => name.slice(name.indexOf(':') + 1);
const prefix = (name: string) => (name.includes(':') ? name.slice(0, name.indexOf(':')) : '');
const num = (v: string | undefined) =>
  v === undefined || v.trim() === '' || !Number.isFinite(Number(v)) ? undefined : Number(v);

/** `01:02:03.5` → 3723.5; plain numbers pass through. */
export function clockSeconds(v: string): number | undefined {
  const parts = v.trim().split(':');
  if (parts.length > 3 || parts.some((p) => p === '' || !Number.isFinite(Number(p)))) return undefined;
  return parts.reduce((acc, p) => acc * 60 + Number(p), 0);
}

function kindOf(url: string, type: string): Rendition['kind'] {
  const t = type.toLowerCase();
  const path = url.split('?')[0]!.toLowerCase();
  if (t.includes('mpegurl') || path.endsWith('.m3u8')) return 'hls';
  if (t.includes('dash') || path.endsWith('.mpd')) return 'dash';
  if (t.includes('mp4') || path.endsWith('.mp4')) return 'mp4';
  return 'other';
}

function cuePoints(name: string, text: string): number[] {
  const ms = prefix(name) === 'ad';
  return text
    .split(/[,\s]+/)
    .filter(Boolean)
    .map((v) => (v.includes(':') ? clockSeconds(v) : ms ? Number(v) / 1000 : Number(v)))
    .filter((v): v is number => v !== undefined && Number.isFinite(v) && v >= 0);
}

/** Channel-level Media RSS elements: the last fallback of every item (Media RSS 1.5.1 precedence). */
interface ChannelDefaults {
  renditions: Rendition[];
  thumbnails: string[];
}

function rendition(a: Record<string, string>): Rendition {
  const url = a['url']!;
  const r: Rendition = { url, type: a['type'] ?? '', kind: kindOf(url, a['type'] ?? '') };
  const bitrate = num(a['bitrate']);
  const width = num(a['width']);
  const height = num(a['height']);
  const duration = num(a['duration']);
  if (bitrate !== undefined) r.bitrate = bitrate;
  if (width !== undefined) r.width = width;
  if (height !== undefined) r.height = height;
  if (duration !== undefined) r.duration = duration;
  return r;
}

function finish(d: Draft, channel: ChannelDefaults): CatalogItem | undefined {
  const guid = (d.guid ?? d.contentId ?? d.link ?? '').trim();
  if (!guid) return undefined;
  const renditions = d.renditions.length
    ? d.renditions
    : d.groupRenditions.length
      ? d.groupRenditions
      : channel.renditions;
  const duration = d.duration ?? renditions.find((r) => r.duration !== undefined)?.duration ?? null;
  const item: Omit<CatalogItem, 'content_hash'> = {
    guid: guid.slice(0, 512),
    ...(d.contentId && d.contentId.trim() !== guid ? { content_id: d.contentId.trim().slice(0, 512) } : {}),
    title: (d.title ?? d.mediaTitle ?? '').trim(),
    description: (d.description ?? d.mediaDescription ?? '').trim(),
    published: d.published ?? null,
    duration,
    renditions,
    thumbnails: [...new Set(d.thumbnails.length ? d.thumbnails : channel.thumbnails)],
    cue_points: [...new Set(d.cuePoints)].sort((a, b) => a - b),
    extras: d.extras,
  };
  return { ...item, content_hash: createHash('sha256').update(JSON.stringify(item)).digest('hex') };
}

/** Feed it text chunks; items come out through onItem as each closes. */
export class MrssReader {
  nextLink: string | undefined;
  itemCount = 0;
  /** Items without guid, dfpvideo:contentId or link: they cannot be keyed, so they are not catalogued. */
  skipped = 0;
  private readonly parser = new SaxesParser({ xmlns: false, position: false });
  private readonly stack: string[] = [];
  private draft: Draft | undefined;
  private text = '';
  private failure: Error | undefined;
  private started = false;
  private sawRoot = false;
  private readonly channel: ChannelDefaults = { renditions: [], thumbnails: [] };

  constructor(
    private readonly onItem: (item: CatalogItem) => void,
    private readonly limits: MrssLimits = defaultLimits,
  ) {
    this.parser.on('doctype', () => this.fail('a DOCTYPE is not accepted'));
    this.parser.on('error', (err) => this.fail(`malformed XML: ${err.message}`));
    this.parser.on('opentag', (tag) => this.open(tag));
    this.parser.on('closetag', (tag) => this.closeTag(tag.name));
    this.parser.on('text', (t) => this.addText(t));
    this.parser.on('cdata', (t) => this.addText(t));
  }

  write(chunk: string): void {
    if (this.failure) throw this.failure;
    if (!this.started) {
      // A BOM or whitespace before the XML declaration is tolerated.
      chunk = chunk.replace(/^\uFEFF?\s+/, '').replace(/^\uFEFF/, '');
      if (!chunk) return;
      this.started = true;
    }
    try {
      this.parser.write(chunk);
    } catch (err) {
      this.fail((err as Error).message);
    }
    if (this.failure) throw this.failure;
  }

  close(): void {
    if (this.failure) throw this.failure;
    try {
      this.parser.close();
    } catch (err) {
      this.fail(`malformed XML: ${(err as Error).message}`);
    }
    if (this.failure) throw this.failure;
    if (!this.stack.length && !this.sawRoot) throw new MrssError('empty document');
  }

  private fail(message: string): void {
    this.failure ??= new MrssError(message);
  }

  /** Attribute values count against the item's budget like its text (a 1 MB url="" is as big as 1 MB of text). */
  private countAttributes(a: Record<string, string>): boolean {
    for (const k in a) this.draft!.chars += k.length + a[k]!.length;
    if (this.draft!.chars <= this.limits.maxItemChars) return true;
    this.fail(`an item exceeds ${this.limits.maxItemChars} characters`);
    return false;
  }

  private addText(t: string): void {
    if (this.draft) {
      this.draft.chars += t.length;
      if (this.draft.chars > this.limits.maxItemChars)
        this.fail(`an item exceeds ${this.limits.maxItemChars} characters`);
    }
    if (this.text.length < 1_000_000) this.text += t;
  }

  private open(tag: SaxesTagPlain): void {
    if (this.failure) return;
    this.sawRoot = true;
    this.stack.push(tag.name);
    if (this.stack.length > this.limits.maxDepth) return this.fail('the document nests too deep');
    this.text = '';
    const name = local(tag.name);
    const a = tag.attributes;
    if (!this.draft) {
      if (name === 'item' || name === 'entry') {
        if (++this.itemCount > this.limits.maxItems) return this.fail(`more than ${this.limits.maxItems} items`);
        this.draft = { renditions: [], groupRenditions: [], thumbnails: [], cuePoints: [], extras: {}, chars: 0 };
        this.countAttributes(a);
      } else if (name === 'link' && a['rel'] === 'next' && a['href']) this.nextLink = a['href'];
      else if (name === 'content' && prefix(tag.name) === 'media' && a['url'])
        this.channel.renditions.push(rendition(a));
      else if (name === 'thumbnail' && a['url']) this.channel.thumbnails.push(a['url']);
      return;
    }
    const d = this.draft;
    if (!this.countAttributes(a)) return;
    if (name === 'content' && prefix(tag.name) === 'media' && a['url']) {
      const inGroup = this.stack.some((s) => local(s) === 'group');
      (inGroup ? d.groupRenditions : d.renditions).push(rendition(a));
    } else if (name === 'thumbnail' && a['url']) d.thumbnails.push(a['url']);
    else if (name === 'link' && a['href'] && (!a['rel'] || a['rel'] === 'alternate')) d.link ??= a['href'];
  }

  private closeTag(qname: string): void {
    if (this.failure) return;
    this.stack.pop();
    const name = local(qname);
    const text = this.text.trim();
    this.text = '';
    const d = this.draft;
    if (!d) return;
    if (name === 'item' || name === 'entry') {
      this.draft = undefined;
      const item = finish(d, this.channel);
      if (item) this.onItem(item);
      else this.skipped++;
      return;
    }
    const p = prefix(qname);
    if (name === 'guid' || (name === 'id' && !p)) d.guid ??= text || undefined;
    else if (name === 'contentId') d.contentId ??= text || undefined;
    else if (name === 'link' && !p && text) d.link ??= text;
    else if (name === 'title') {
      if (p === 'media') d.mediaTitle ??= text;
      else d.title ??= text;
    } else if (name === 'description' || name === 'summary') {
      if (p === 'media') d.mediaDescription ??= text;
      else d.description ??= text;
    } else if (name === 'pubDate' || name === 'published' || name === 'updated' || name === 'modified') {
      const t = Date.parse(text);
      if (!Number.isNaN(t) && !d.published) d.published = new Date(t).toISOString();
    } else if (name === 'duration' && text) {
      const v = text.includes(':') ? clockSeconds(text) : num(text);
      if (v !== undefined) d.duration ??= v;
    } else if (name === 'cuepoints') d.cuePoints.push(...cuePoints(qname, text));
    else if (text && !(qname in d.extras) && Object.keys(d.extras).length < 100) d.extras[qname] = text.slice(0, 4096);
  }
}

/** Whole-document form (push bodies). */
export function parseMrss(
  xml: string,
  limits: MrssLimits = defaultLimits,
): { items: CatalogItem[]; skipped: number; nextLink?: string } {
  const items: CatalogItem[] = [];
  const reader = new MrssReader((i) => items.push(i), limits);
  reader.write(xml);
  reader.close();
  return reader.nextLink
    ? { items, skipped: reader.skipped, nextLink: reader.nextLink }
    : { items, skipped: reader.skipped };
}
