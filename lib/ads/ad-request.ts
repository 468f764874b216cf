/**
 * The ad request of a squeeze break (spec rule 3), FreeWheel style: `?<global params>;<slot
 * params>;<key-values>`. Global params carry the network/profile settings of the brand's and
 * event's `ad_tag`, `caid`, `csid`, `vprn`, `pvrn`, `resp=vmap1` and the privacy signals; the slot
 * asks for one mid-roll of the break's duration; the stream's targeting (FWParams) become the
 * key-values. An `ad_tag.template` that is a full URL replaces AD_SERVER_URL; its `{name}`
 * placeholders are filled from the targeting.
 */
export interface AdTagSettings {
  template?: string;
  params?: Record<string, string | number | boolean>;
}

export interface AdRequestContext {
  adServerUrl: string;
  adTag: AdTagSettings;
  /** Event-level overrides (`ad_tag_override`). */
  override?: Record<string, unknown>;
  caid?: string;
  assetId: string;
  breakId: string;
  durationSec: number;
  slau?: string;
  targeting?: Record<string, string>;
  vprn?: string;
  pvrn?: string;
  /** The viewer's address (FreeWheel `vip`), unless the targeting names one. */
  clientIp?: string;
  /** The break's ad-break id, sent as a key-value unless the targeting names one. */
  abid?: string;
  /**
   * A VOD asset for server-side stitching: `vdur` carries its duration and the slots become a
   * pre-roll, a mid-roll per cue point (`tpos` in seconds) and a post-roll, instead of the one
   * mid-roll of a squeeze break.
   */
  vod?: { durationSec: number; cuePoints: number[] };
}

/** Parameters that are request-level signals, not key-values (FreeWheel and IAB privacy names). */
const GLOBAL_KEYS = new Set([
  'nw',
  'prof',
  'csid',
  'caid',
  'afid',
  'sfid',
  'vdur',
  'vprn',
  'pvrn',
  'flag',
  'metr',
  'resp',
  'ssnw',
  'vip',
  'vclr',
  '_fw_us_privacy',
  'us_privacy',
  '_fw_gdpr',
  'gdpr',
  '_fw_gdpr_consent',
  'gdpr_consent',
  '_fw_coppa',
  'coppa',
  '_fw_did',
  '_fw_is_lat',
  'ltlg',
]);
const MAX_URL = 8192;

const enc = encodeURIComponent;

function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{([A-Za-z0-9_]+)\}/g, (_, name: string) => enc(values[name] ?? ''));
}

/** The ad request URL, or undefined when neither AD_SERVER_URL nor a template URL is configured. */
export function buildAdRequestUrl(ctx: AdRequestContext): string | undefined {
  const targeting = ctx.targeting ?? {};
  const values: Record<string, string> = {
    ...targeting,
    caid: ctx.caid ?? ctx.assetId,
    asset_id: ctx.assetId,
    break_id: ctx.breakId,
    duration: String(Math.round(ctx.durationSec)),
  };
  const template =
    ctx.adTag.template && /^https?:\/\//i.test(ctx.adTag.template)
      ? fillTemplate(ctx.adTag.template, values)
      : undefined;
  const base = template ?? ctx.adServerUrl;
  if (!base) return undefined;

  const global = new Map<string, string>();
  const params = { ...ctx.adTag.params, ...(ctx.override?.['params'] as Record<string, unknown> | undefined) };
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) global.set(k, String(v));
  global.set('caid', ctx.caid ?? ctx.assetId);
  if (!global.has('csid')) global.set('csid', ctx.assetId);
  global.set('resp', 'vmap1');
  if (ctx.vprn) global.set('vprn', ctx.vprn);
  if (ctx.pvrn) global.set('pvrn', ctx.pvrn);
  if (ctx.clientIp) global.set('vip', ctx.clientIp);
  const kv: string[] = [];
  if (ctx.abid && targeting['abid'] === undefined) kv.push(`abid=${enc(ctx.abid)}`);
  // Key-values are the first thing to give up when a stream's targeting is enormous: global and slot stay whole.
  for (const [k, v] of Object.entries(targeting)) {
    if (GLOBAL_KEYS.has(k)) global.set(k, v);
    else kv.push(`${enc(k)}=${enc(v)}`);
  }
  if (ctx.vod) global.set('vdur', String(Math.round(ctx.vod.durationSec)));
  const slots = ctx.vod
    ? vodSlots(ctx.vod.cuePoints, ctx.slau)
    : [
        [
          `slid=sqz_${enc(ctx.breakId)}`,
          'tpos=0',
          'ptgt=a',
          `maxd=${Math.round(ctx.durationSec)}`,
          `mind=${Math.round(ctx.durationSec)}`,
          ...(ctx.slau ? [`slau=${enc(ctx.slau)}`] : []),
        ],
      ];
  const head = [...global].map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&');
  const sep = base.includes('?') ? (base.endsWith('?') || base.endsWith('&') ? '' : '&') : '?';
  let url = `${base}${sep}${head};${slots.map((s) => s.join('&')).join(';')};`;
  let first = true;
  for (const pair of kv) {
    const add = first ? pair : `&${pair}`;
    if (url.length + add.length > MAX_URL) break;
    url += add;
    first = false;
  }
  return url;
}

/** FreeWheel temporal slots of a VOD asset: `tpcl` PREROLL, MIDROLL at each cue point, POSTROLL. */
function vodSlots(cuePoints: number[], slau: string | undefined): string[][] {
  const extra = slau ? [`slau=${enc(slau)}`] : [];
  const mids = cuePoints.filter((c) => c > 0).slice(0, 100);
  return [
    ['slid=pre', 'tpcl=PREROLL', 'ptgt=a', ...extra],
    ...mids.map((c, i) => [
      `slid=mid${i + 1}`,
      'tpcl=MIDROLL',
      `tpos=${Math.round(c * 1000) / 1000}`,
      'ptgt=a',
      ...extra,
    ]),
    ['slid=post', 'tpcl=POSTROLL', 'ptgt=a', ...extra],
  ];
}
