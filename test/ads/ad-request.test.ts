import t from 'tap';
import { buildAdRequestUrl, type AdRequestContext } from '../../lib/ads/ad-request.js';

const FW = 'https://5fd74.v.fwmrm.net/ad/g/1';

/** Splits a FreeWheel-style request into its base and its `global;slot;kv` sections of decoded pairs. */
function parse(url: string) {
  const q = url.indexOf('?');
  const query = url.slice(q + 1);
  const sections = query.split(';');
  const pairs = (s: string | undefined) =>
    s ? s.split('&').map((p) => p.split('=').map(decodeURIComponent) as [string, string]) : [];
  return {
    base: url.slice(0, q),
    sections: sections.length,
    global: pairs(sections[0]),
    slot: pairs(sections[1]),
    kv: pairs(sections[2]),
  };
}

const ctx = (over: Partial<AdRequestContext> = {}): AdRequestContext => ({
  adServerUrl: FW,
  adTag: {},
  assetId: 'asset-1',
  breakId: 'brk-1',
  durationSec: 30,
  ...over,
});

t.test('FreeWheel layout: global;slot;kv', async (t) => {
  const url = buildAdRequestUrl(
    ctx({
      adTag: { params: { nw: 376658, prof: '376658:sqz_live', flag: '+sltp+exvt+emcr' } },
      caid: 'caid-9',
      durationSec: 30.4,
      slau: 'midroll slot',
      vprn: '1234567',
      pvrn: '7654321',
      targeting: { genre: 'news', _fw_vcid2: 'u-1' },
    }),
  )!;
  t.ok(url.startsWith(`${FW}?`), 'the ad server URL, then the query');
  const p = parse(url);
  t.equal(p.sections, 3, 'three ;-separated sections');
  t.same(p.global, [
    ['nw', '376658'],
    ['prof', '376658:sqz_live'],
    ['flag', '+sltp+exvt+emcr'],
    ['caid', 'caid-9'],
    ['csid', 'asset-1'],
    ['resp', 'vmap1'],
    ['vprn', '1234567'],
    ['pvrn', '7654321'],
  ]);
  t.same(p.slot, [
    ['slid', 'sqz_brk-1'],
    ['tpos', '0'],
    ['ptgt', 'a'],
    ['maxd', '30'],
    ['mind', '30'],
    ['slau', 'midroll slot'],
  ]);
  t.same(p.kv, [
    ['genre', 'news'],
    ['_fw_vcid2', 'u-1'],
  ]);
  t.notMatch(url, /\+sltp/, 'a literal + is encoded (it would read as a space)');
  t.match(url, /slau=midroll%20slot/);
});

t.test('caid, csid, vprn/pvrn defaults', async (t) => {
  const g = (over: Partial<AdRequestContext>) => Object.fromEntries(parse(buildAdRequestUrl(ctx(over))!).global);
  t.match(g({}), { caid: 'asset-1', csid: 'asset-1', resp: 'vmap1' }, 'caid defaults to the asset id');
  t.notOk('vprn' in g({}) || 'pvrn' in g({}), 'no vprn/pvrn unless given');
  t.notOk('vprn' in g({ vprn: '' }), 'an empty vprn is left out');
  t.equal(g({ adTag: { params: { csid: 'site-section' } } })['csid'], 'site-section', 'a configured csid is kept');
  t.equal(
    g({ adTag: { params: { caid: 'from-params' } }, caid: 'evt' })['caid'],
    'evt',
    'the event caid wins over ad_tag params',
  );
  t.equal(g({ adTag: { params: { resp: 'vast4' } } })['resp'], 'vmap1', 'the response format is always VMAP');
  const s = Object.fromEntries(parse(buildAdRequestUrl(ctx({ durationSec: 29.5 }))!).slot);
  t.match(s, { maxd: '30', mind: '30' }, 'durations rounded');
  t.notOk('slau' in s, 'no slau unless given');
  t.equal(Object.fromEntries(parse(buildAdRequestUrl(ctx({ durationSec: 14.49 }))!).slot)['maxd'], '14');
});

t.test('privacy parameters move from targeting to the global section', async (t) => {
  const p = parse(
    buildAdRequestUrl(
      ctx({
        targeting: {
          us_privacy: '1YNN',
          genre: 'sport',
          gdpr: '1',
          gdpr_consent: 'CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA',
          _fw_us_privacy: '1YN-',
          _fw_coppa: '0',
          team: 'a;b',
        },
      }),
    )!,
  );
  const global = Object.fromEntries(p.global);
  t.match(global, {
    us_privacy: '1YNN',
    gdpr: '1',
    gdpr_consent: 'CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA',
    _fw_us_privacy: '1YN-',
    _fw_coppa: '0',
  });
  t.same(
    p.kv,
    [
      ['genre', 'sport'],
      ['team', 'a;b'],
    ],
    'only the other targeting stays key-values',
  );
  for (const k of ['us_privacy', 'gdpr', 'gdpr_consent', '_fw_us_privacy'])
    t.notOk(
      p.kv.some(([key]) => key === k),
      `${k} not a key-value`,
    );
  // Targeting overrides the same signal from ad_tag params (the stream knows its consent).
  const o = Object.fromEntries(
    parse(buildAdRequestUrl(ctx({ adTag: { params: { us_privacy: '1---' } }, targeting: { us_privacy: '1YYY' } }))!)
      .global,
  );
  t.equal(o['us_privacy'], '1YYY');
});

t.test('hostile and unicode targeting is URL-encoded', async (t) => {
  const targeting = { 'k&;=?#': 'v&;=?#/ %+', näme: '東京 🎬', plain: 'x', '': 'empty-key', e: '' };
  const url = buildAdRequestUrl(ctx({ targeting, breakId: 'b;1&x=y', slau: 'a;b&c' }))!;
  t.notMatch(url.slice(url.indexOf('?') + 1), /[#?]/, 'no raw ? or # in the query');
  t.notMatch(url, /[^\x21-\x7e]/, 'ASCII only, no spaces');
  const p = parse(url);
  t.equal(p.sections, 3, 'no stray ;');
  t.same(p.kv, Object.entries(targeting), 'every pair round-trips');
  t.equal(Object.fromEntries(p.slot)['slid'], 'sqz_b;1&x=y');
  t.equal(Object.fromEntries(p.slot)['slau'], 'a;b&c');
  t.match(url, /n%C3%A4me=%E6%9D%B1%E4%BA%AC%20%F0%9F%8E%AC/);
  t.equal(new URL(url).hash, '', 'no fragment');
});

t.test('ad_tag.params and event override params', async (t) => {
  const url = buildAdRequestUrl(
    ctx({
      adTag: { params: { nw: 1, prof: 'brand', afid: 'a', vip: true, 'odd key': 'v&w' } },
      override: { params: { prof: 'event', ssnw: 99, gone: null, skip: undefined }, other: 'ignored' },
    }),
  )!;
  const p = parse(url);
  t.same(
    p.global.slice(0, 6),
    [
      ['nw', '1'],
      ['prof', 'event'],
      ['afid', 'a'],
      ['vip', 'true'],
      ['odd key', 'v&w'],
      ['ssnw', '99'],
    ],
    'override wins, new keys added, types stringified',
  );
  t.notOk(
    p.global.some(([k]) => k === 'gone' || k === 'skip' || k === 'other'),
    'null/undefined params and non-params overrides left out',
  );
  t.match(url, /odd%20key=v%26w/);
  t.same(p.kv, []);
  t.ok(url.endsWith(';'), 'an empty key-value section still ends with its separator');
  t.same(
    parse(buildAdRequestUrl(ctx({ override: {} }))!).global.map(([k]) => k),
    ['caid', 'csid', 'resp'],
    'an override without params',
  );
});

t.test('template URL: placeholders filled and encoded; it replaces AD_SERVER_URL', async (t) => {
  const template = 'https://ads.example.com/vast/{asset_id}?b={break_id}&d={duration}&c={caid}&g={genre}&u={unknown}';
  const url = buildAdRequestUrl(
    ctx({
      adTag: { template },
      caid: 'c 1',
      breakId: 'b/1',
      durationSec: 15.2,
      targeting: { genre: 'a&b=c#d', us_privacy: '1YNN' },
    }),
  )!;
  t.ok(url.startsWith('https://ads.example.com/vast/asset-1?b=b%2F1&d=15&c=c%201&g=a%26b%3Dc%23d&u=&'), url);
  t.notOk(url.includes(FW), 'AD_SERVER_URL not used');
  const p = parse(url);
  t.equal(p.sections, 3);
  t.match(Object.fromEntries(p.global), {
    b: 'b/1',
    d: '15',
    c: 'c 1',
    g: 'a&b=c#d',
    u: '',
    caid: 'c 1',
    csid: 'asset-1',
    resp: 'vmap1',
    us_privacy: '1YNN',
  });
  t.same(p.kv, [['genre', 'a&b=c#d']]);
  // Targeting cannot replace the request's own values.
  const own = buildAdRequestUrl(
    ctx({
      adTag: { template: 'http://ads.example.com/x?a={asset_id}&c={caid}' },
      targeting: { asset_id: 'evil', caid: 'evil' },
    }),
  )!;
  t.ok(own.startsWith('http://ads.example.com/x?a=asset-1&c=asset-1&'), own);
  t.ok(
    buildAdRequestUrl(ctx({ adTag: { template: 'HTTPS://Ads.Example.com/x' } }))!.startsWith(
      'HTTPS://Ads.Example.com/x?',
    ),
    'scheme case-insensitive',
  );
  // A template that is not a URL is ignored.
  t.ok(buildAdRequestUrl(ctx({ adTag: { template: 'nw={nw}&x=1' } }))!.startsWith(`${FW}?`));
  t.ok(buildAdRequestUrl(ctx({ adTag: { template: 'ftp://ads.example.com/{asset_id}' } }))!.startsWith(`${FW}?`));
  t.equal(
    buildAdRequestUrl(ctx({ adServerUrl: '', adTag: { template: 'ftp://ads.example.com/{asset_id}' } })),
    undefined,
  );
  const noQuery = buildAdRequestUrl(
    ctx({ adServerUrl: '', adTag: { template: 'https://ads.example.com/{asset_id}/{break_id}' } }),
  )!;
  t.ok(
    noQuery.startsWith('https://ads.example.com/asset-1/brk-1?caid=asset-1&'),
    'a template works without AD_SERVER_URL',
  );
});

t.test('no AD_SERVER_URL and no template → undefined', async (t) => {
  t.equal(buildAdRequestUrl(ctx({ adServerUrl: '' })), undefined);
  t.equal(buildAdRequestUrl(ctx({ adServerUrl: '', adTag: { template: '' } })), undefined);
  t.equal(buildAdRequestUrl(ctx({ adServerUrl: '', adTag: { params: { nw: 1 } }, targeting: { a: 'b' } })), undefined);
});

t.test('a base URL that already has a query', async (t) => {
  const u1 = buildAdRequestUrl(ctx({ adServerUrl: `${FW}?nw=1` }))!;
  t.ok(u1.startsWith(`${FW}?nw=1&caid=asset-1&csid=asset-1&resp=vmap1;`), u1);
  t.equal(u1.split('?').length, 2, 'one ?');
  const u2 = buildAdRequestUrl(ctx({ adServerUrl: `${FW}?` }))!;
  t.ok(u2.startsWith(`${FW}?caid=`), u2);
  const u3 = buildAdRequestUrl(ctx({ adServerUrl: `${FW}?nw=1&` }))!;
  t.ok(u3.startsWith(`${FW}?nw=1&caid=`), u3);
  t.equal(parse(u1).sections, 3);
  t.same(parse(u1).global[0], ['nw', '1']);
});

t.test('8 KiB cap: key-values give up whole pairs first', async (t) => {
  const targeting: Record<string, string> = {};
  for (let i = 0; i < 600; i++) targeting[`key${String(i).padStart(3, '0')}`] = `value-${i}-${'x'.repeat(10)}`;
  targeting['us_privacy'] = '1YNN';
  const url = buildAdRequestUrl(ctx({ targeting, adTag: { params: { nw: 1 } } }))!;
  t.ok(url.length <= 8192, `capped (${url.length})`);
  t.ok(url.length > 8000, 'not cut more than needed');
  const p = parse(url);
  t.equal(p.sections, 3);
  t.match(Object.fromEntries(p.global), { nw: '1', us_privacy: '1YNN', resp: 'vmap1' }, 'global section intact');
  t.equal(p.slot.length, 5, 'slot section intact');
  t.ok(p.kv.length > 100 && p.kv.length < 600, `some key-values dropped (${p.kv.length} kept)`);
  const all = Object.entries(targeting).filter(([k]) => k !== 'us_privacy');
  t.same(p.kv, all.slice(0, p.kv.length), 'the kept key-values are a whole-pair prefix');
  // The uncapped URL would be: exactly at the limit nothing is cut.
  const base = buildAdRequestUrl(ctx({ targeting: { k: '' } }))!;
  const pad = 8192 - base.length;
  const exact = buildAdRequestUrl(ctx({ targeting: { k: 'a'.repeat(pad) } }))!;
  t.equal(exact.length, 8192, 'exactly 8192 characters kept');
  t.ok(exact.endsWith('a'.repeat(pad)));
  const over = buildAdRequestUrl(ctx({ targeting: { a: 'b', k: 'a'.repeat(pad + 1) } }))!;
  t.ok(over.length <= 8192);
  t.same(parse(over).kv, [['a', 'b']], 'one over: the last pair goes');
});

t.test('8 KiB cap: one oversized key-value does not cut the slot section', async (t) => {
  const url = buildAdRequestUrl(ctx({ targeting: { big: 'x'.repeat(9000) } }))!;
  t.ok(url.length <= 8192, `capped (${url.length})`);
  const p = parse(url);
  t.notOk(url.includes('x'.repeat(100)), 'the oversized value is dropped');
  t.equal(p.sections, 3, 'global;slot;kv kept');
  t.same(
    p.slot.map(([k]) => k),
    ['slid', 'tpos', 'ptgt', 'maxd', 'mind'],
    'slot params kept (mind included)',
  );
});
