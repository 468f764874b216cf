import t from 'tap';
import { BrandMatcher, globMatch, normalizeHostname, type BrandRule } from '../../lib/brand/matcher.js';

let nextId = 1;
const rule = (r: Partial<BrandRule> & Pick<BrandRule, 'match_type' | 'match_value'>): BrandRule => ({
  id: nextId++,
  brand_name: 'b',
  match_name: '',
  ...r,
});

t.test('globMatch', async (t) => {
  const cases: Array<[string, string, boolean]> = [
    ['abc', 'abc', true],
    ['abc', 'abd', false],
    ['a*c', 'abbbc', true],
    ['a*c', 'ac', true],
    ['a?c', 'abc', true],
    ['a?c', 'ac', false],
    ['*', '', true],
    ['', '', true],
    ['', 'x', false],
    ['*.example.com', 'cdn.example.com', true],
    ['*.example.com', 'example.com', false],
    ['*a*b*c', 'xxaxxbxxc', true],
    ['*a*b*c', 'xxaxxcxxb', false],
    ['a**b', 'ab', true],
  ];
  for (const [p, s, want] of cases) t.equal(globMatch(p, s), want, `${p} ~ ${s}`);
  // pathological input stays fast (no regex backtracking)
  const started = Date.now();
  t.equal(globMatch('*a*a*a*a*a*a*a*b', 'a'.repeat(5000)), false);
  t.ok(Date.now() - started < 2000, 'pathological pattern finishes');
});

t.test('normalizeHostname', async (t) => {
  t.equal(normalizeHostname('Example.COM:8080'), 'example.com');
  t.equal(normalizeHostname('[::1]:80'), '::1');
  t.equal(normalizeHostname('www.example.com.'), 'www.example.com');
});

t.test('matching by type, case rules and specificity', async (t) => {
  const hostWild = rule({ brand_name: 'wild', match_type: 'hostname', match_value: '*.example.com' });
  const hostExact = rule({ brand_name: 'exact', match_type: 'hostname', match_value: 'TV.example.com' });
  const header = rule({ brand_name: 'hdr', match_type: 'header', match_name: 'X-Brand', match_value: 'acme' });
  const query = rule({ brand_name: 'qp', match_type: 'query_param', match_name: 'brand', match_value: 'acme' });
  const queryWild = rule({ brand_name: 'qpw', match_type: 'query_param', match_name: 'brand', match_value: 'ac*' });
  const m = new BrandMatcher([hostWild, hostExact, header, query, queryWild]);

  t.equal(
    m.resolve({ hostname: 'tv.EXAMPLE.com:443' })?.brand_name,
    'exact',
    'exact host beats wildcard; case-insensitive; port ignored',
  );
  t.equal(m.resolve({ hostname: 'radio.example.com' })?.brand_name, 'wild');
  t.equal(
    m.resolve({ headers: { 'x-forwarded-host': 'radio.example.com, proxy.internal' } })?.brand_name,
    'wild',
    'X-Forwarded-Host, first hop',
  );
  t.equal(
    m.resolve({ headers: { 'X-Forwarded': 'for=1.2.3.4;host=tv.example.com' } })?.brand_name,
    'exact',
    'X-Forwarded host=',
  );
  // issue 25: a bare host in X-Forwarded is recognised like host=
  t.equal(
    m.resolve({ headers: { 'X-Forwarded': 'tv.example.com' } })?.brand_name,
    'exact',
    'X-Forwarded with a bare host',
  );
  t.equal(
    m.resolve({ headers: { 'X-Forwarded': 'TV.example.com:443, proxy.internal' } })?.brand_name,
    'exact',
    'X-Forwarded bare host: first hop, port and case ignored',
  );
  t.equal(
    m.resolve({ headers: { 'X-Forwarded': 'for=1.2.3.4' } }),
    undefined,
    'X-Forwarded with only for= names no host',
  );
  t.equal(m.resolve({ headers: { 'x-BRAND': 'acme' } })?.brand_name, 'hdr', 'header names case-insensitive');
  t.equal(m.resolve({ headers: { 'x-brand': 'ACME' } }), undefined, 'header values case-sensitive');
  t.equal(m.resolve({ query: 'brand=acme&x=1' })?.brand_name, 'qp', 'exact query beats wildcard query');
  t.equal(m.resolve({ query: { brand: 'acx' } })?.brand_name, 'qpw');
  t.equal(m.resolve({ query: { Brand: 'acme' } }), undefined, 'query names are case-sensitive');
  t.equal(
    m.resolve({ query: 'brand=acme', headers: { 'x-brand': 'acme' } })?.brand_name,
    'qp',
    'tie: query_param beats header',
  );
  t.equal(
    m.resolve({ headers: { 'x-brand': 'acme' }, hostname: 'tv.example.com' })?.brand_name,
    'exact',
    'tie on wildcards: longer literal wins',
  );
  t.equal(m.resolve({}), undefined);
});

t.test('fewest wildcards, then longest literal', async (t) => {
  const a = rule({ brand_name: 'two-stars', match_type: 'hostname', match_value: '*.tv.*' });
  const b = rule({ brand_name: 'one-star-short', match_type: 'hostname', match_value: '*.com' });
  const c = rule({ brand_name: 'one-star-long', match_type: 'hostname', match_value: '*.tv.acme.com' });
  const m = new BrandMatcher([a, b, c]);
  t.equal(m.resolve({ hostname: 'x.tv.acme.com' })?.brand_name, 'one-star-long');
  t.equal(m.resolve({ hostname: 'x.tv.other.com' })?.brand_name, 'one-star-short');
  t.equal(m.resolve({ hostname: 'x.tv.other.org' })?.brand_name, 'two-stars');
});
