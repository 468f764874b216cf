/**
 * Which ad rendition plays in place of each content rendition (docs/design.md §11): for a variant,
 * the same codec family, then the same resolution (else the nearest height), then the nearest
 * bandwidth; for audio, the same group and language, else the same language, else the first; for
 * subtitles, the same language, else nothing (the caller fills the gap with empty cues).
 */
import type { MasterPlaylist, Rendition, Variant } from './master.js';

const FAMILIES: Array<[RegExp, string]> = [
  [/^(avc1|avc3)\b/i, 'avc'],
  [/^(hvc1|hev1)\b/i, 'hevc'],
  [/^(dvh1|dvhe)\b/i, 'dolby-vision'],
  [/^av01\b/i, 'av1'],
  [/^(vp09|vp9)\b/i, 'vp9'],
];

/** The video codec family of a variant (`avc`, `hevc`, …), '' when CODECS names none. */
export function videoFamily(codecs: string[]): string {
  for (const c of codecs) for (const [re, family] of FAMILIES) if (re.test(c)) return family;
  return '';
}

function nearest<T>(items: T[], distance: (x: T) => number): T[] {
  if (!items.length) return items;
  const best = Math.min(...items.map(distance));
  return items.filter((x) => distance(x) === best);
}

export function matchVariant(
  content: Pick<Variant, 'codecs' | 'width' | 'height' | 'bandwidth'>,
  ad: Variant[],
): Variant {
  const family = videoFamily(content.codecs);
  let pool = family ? ad.filter((v) => videoFamily(v.codecs) === family) : ad;
  if (!pool.length) pool = ad;
  if (content.height) {
    const same = pool.filter((v) => v.width === content.width && v.height === content.height);
    pool = same.length ? same : nearest(pool, (v) => Math.abs(v.height - content.height));
  }
  return nearest(pool, (v) => Math.abs(v.bandwidth - content.bandwidth))[0]!;
}

export function matchAudio(content: Rendition, adVariant: Variant, ad: MasterPlaylist): Rendition | undefined {
  const audio = ad.renditions.filter((r) => r.type === 'AUDIO' && r.uri);
  const lang = (r: Rendition) => (r.language ?? '').toLowerCase();
  const inGroup = audio.filter((r) => r.groupId === adVariant.audio);
  return (
    inGroup.find((r) => lang(r) === lang(content) && r.channels === content.channels) ??
    inGroup.find((r) => lang(r) === lang(content)) ??
    audio.find((r) => lang(r) === lang(content)) ??
    inGroup[0] ??
    audio[0]
  );
}

export function matchSubtitles(content: Rendition, ad: MasterPlaylist): Rendition | undefined {
  const lang = (content.language ?? '').toLowerCase();
  return ad.renditions.find((r) => r.type === 'SUBTITLES' && r.uri && (r.language ?? '').toLowerCase() === lang);
}
