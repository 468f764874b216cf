import t from 'tap';
import { beaconUrl, verifyBeacon, MAX_BEACON_QUERY } from '../../lib/ads/beacon.js';

const secret = 'beacon-secret-0123456789';
const base = 'https://edge.example.com/';
const beacon = {
  url: 'https://ads.example.com/track?ad=1&ev=start&cb=[CACHEBUSTING]&q=a+b%20c',
  streamId: 'stream 42/é',
  event: 'start',
};
const queryOf = (u: string) => u.slice(u.indexOf('?') + 1);
const signed = () => queryOf(beaconUrl(base, secret, beacon));
const param = (q: string, name: string) => q.split('&').find((p) => p.startsWith(`${name}=`))!;
const replace = (q: string, name: string, value: string) => q.replace(param(q, name), `${name}=${value}`);

t.test('round trip', async (t) => {
  const url = beaconUrl(base, secret, beacon);
  t.ok(url.startsWith('https://edge.example.com/beacon?u='), 'one slash between base and path');
  t.match(url, /&e=start&sig=[A-Za-z0-9_-]{43}$/);
  t.same(verifyBeacon(queryOf(url), secret), { ok: true, beacon });
  // Through a WHATWG parser, as the endpoint will receive it.
  t.same(verifyBeacon(new URL(url).search.slice(1), secret), { ok: true, beacon });
  t.throws(() => beaconUrl(base, '', beacon), 'an empty secret is a configuration error');
});

t.test('extra parameters are ignored, cache busters included', async (t) => {
  t.equal(verifyBeacon(`${signed()}&cb=123&`, secret).ok, true);
  t.equal(verifyBeacon(`cb=1&${signed()}`, secret).ok, true);
});

t.test('tampering with any field breaks the signature', async (t) => {
  const q = signed();
  for (const [name, value] of [
    ['u', encodeURIComponent('https://evil.example.com/x')],
    ['s', 'other'],
    ['e', 'complete'],
  ] as const) {
    const r = verifyBeacon(replace(q, name, value), secret);
    t.same(r, { ok: false, reason: 'bad signature' }, `tampered ${name}`);
  }
  t.equal(verifyBeacon(q, 'another-secret-0123456789').ok, false, 'another secret');
  // Shifting bytes between fields keeps the concatenation but not the JSON encoding.
  const a = beaconUrl(base, secret, { url: 'https://a.example.com/x', streamId: 'ab', event: 'start' });
  const shifted = replace(replace(queryOf(a), 's', 'a'), 'e', 'bstart');
  t.equal(verifyBeacon(shifted, secret).ok, false, 'field boundaries are part of the signature');
});

t.test('forged and malformed signatures', async (t) => {
  const q = signed();
  const sig = param(q, 'sig').slice(4);
  const flipped = sig.slice(0, -1) + (sig.endsWith('A') ? 'B' : 'A');
  for (const bad of [
    flipped,
    sig.slice(0, -1),
    `${sig}A`,
    `${sig.slice(0, -1)}=`,
    'x',
    '%ZZ',
    Buffer.alloc(32).toString('base64url'),
  ]) {
    const r = verifyBeacon(replace(q, 'sig', bad), secret);
    t.equal(r.ok, false, `sig ${bad}`);
  }
  // The same 32 bytes in a non-canonical spelling (last character's unused bits set) are refused.
  const last = sig.at(-1)!;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const alias = sig.slice(0, -1) + alphabet[alphabet.indexOf(last) ^ 1];
  t.same(Buffer.from(alias, 'base64url'), Buffer.from(sig, 'base64url'), 'alias decodes to the same bytes');
  t.equal(verifyBeacon(replace(q, 'sig', alias), secret).ok, false, 'alias refused');
});

t.test('missing and duplicated parameters', async (t) => {
  const q = signed();
  for (const name of ['u', 's', 'e', 'sig']) {
    const without = q
      .split('&')
      .filter((p) => !p.startsWith(`${name}=`))
      .join('&');
    t.match(verifyBeacon(without, secret), { ok: false, reason: /missing/ }, `without ${name}`);
    t.match(verifyBeacon(replace(q, name, ''), secret), { ok: false, reason: /missing/ }, `empty ${name}`);
    t.match(verifyBeacon(`${q}&${param(q, name)}`, secret), { ok: false, reason: /duplicated/ }, `${name} twice`);
  }
  t.match(
    verifyBeacon(`${q}&%75=${encodeURIComponent('https://evil.example.com/')}`, secret),
    { ok: false, reason: /duplicated/ },
    'an encoded name is the same name',
  );
  t.match(verifyBeacon('', secret), { ok: false });
  t.match(verifyBeacon('&&&', secret), { ok: false });
  t.match(verifyBeacon(q, ''), { ok: false }, 'no secret configured');
});

t.test('bad encoding, oversize and hostile input never throw', async (t) => {
  const q = signed();
  for (const bad of [
    `${q}&u=%E0%A4%A`,
    replace(q, 'u', '%'),
    replace(q, 's', '%uD800'),
    replace(q, 's', '%ED%A0%80'),
    `%=${q}`,
    `${q}&%ZZ=1`,
  ]) {
    t.doesNotThrow(() => verifyBeacon(bad, secret));
    t.equal(verifyBeacon(bad, secret).ok, false, bad.slice(-20));
  }
  const big = `${q}&pad=${'x'.repeat(MAX_BEACON_QUERY)}`;
  t.same(verifyBeacon(big, secret), { ok: false, reason: 'query too large' });
  const longUrl = beaconUrl(base, secret, {
    ...beacon,
    url: `https://ads.example.com/${'a'.repeat(MAX_BEACON_QUERY)}`,
  });
  t.equal(verifyBeacon(queryOf(longUrl), secret).ok, false, 'a signed but oversized beacon');
  for (const hostile of [undefined, null, 42, {}, '=', '==&==', 'u', '&u&s&e&sig'] as unknown[]) {
    t.doesNotThrow(() => verifyBeacon(hostile as string, secret));
    t.equal(verifyBeacon(hostile as string, secret).ok, false);
  }
});

t.test('only http(s) targets, even when signed', async (t) => {
  for (const url of [
    'javascript:alert(1)',
    'file:///etc/passwd',
    'ftp://ads.example.com/x',
    'data:text/plain,hi',
    'not a url',
    '//ads.example.com/x',
  ]) {
    const q = queryOf(beaconUrl(base, secret, { ...beacon, url }));
    const r = verifyBeacon(q, secret);
    t.equal(r.ok, false, url);
    t.match(r, { reason: /u is not/ });
  }
  t.equal(
    verifyBeacon(queryOf(beaconUrl(base, secret, { ...beacon, url: 'http://ads.example.com/x' })), secret).ok,
    true,
  );
});

t.test('scoped to a break and an expiry: both signed, tampering refused, expired refused', async (t) => {
  const scoped = {
    ...beacon,
    breakId: '0f1e2d3c-aaaa-4bbb-8ccc-123456789abc',
    expires: Math.floor(Date.now() / 1000) + 600,
  };
  const q = queryOf(beaconUrl(base, secret, scoped));
  t.same(verifyBeacon(q, secret), { ok: true, beacon: scoped });
  t.same(
    verifyBeacon(q.replace(/&b=[^&]*/, '&b=other'), secret),
    { ok: false, reason: 'bad signature' },
    'another break',
  );
  t.same(
    verifyBeacon(q.replace(/&x=\d+/, `&x=${scoped.expires + 1000}`), secret),
    { ok: false, reason: 'bad signature' },
    'a later expiry',
  );
  t.same(
    verifyBeacon(q.replace(/&b=[^&]*&x=\d+/, ''), secret),
    { ok: false, reason: 'bad signature' },
    'the scope removed',
  );
  t.same(verifyBeacon(q.replace(/&x=\d+/, '&x=-5'), secret), { ok: false, reason: 'bad expiry' });
  const old = queryOf(beaconUrl(base, secret, { ...scoped, expires: Math.floor(Date.now() / 1000) - 1 }));
  t.same(verifyBeacon(old, secret), { ok: false, reason: 'expired' });
});
