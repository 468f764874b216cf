import t from 'tap';
import { blockedRange, OutboundPolicy, OutboundRefused } from '../../lib/outbound/index.js';

const refused: Array<[string, string]> = [
  ['127.0.0.1', 'loopback'],
  ['127.0.0.2', 'loopback'],
  ['10.1.2.3', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'link-local'],
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.254', 'cgnat'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['192.0.0.170', 'reserved'],
  ['198.18.0.1', 'benchmarking'],
  ['192.0.2.1', 'documentation'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'reserved'],
  ['::1', 'loopback'],
  ['::', 'unspecified'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['fd00::1', 'ula'],
  ['fc00::1', 'ula'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['fec0::1', 'site-local'],
  ['ff02::1', 'multicast'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:169.254.169.254', 'link-local'],
  ['::ffff:a9fe:a9fe', 'link-local'],
  ['0:0:0:0:0:ffff:10.0.0.1', 'private'],
  ['::127.0.0.1', 'ipv4-compatible'],
  ['64:ff9b::10.0.0.1', 'private'],
  ['64:ff9b::7f00:1', 'loopback'],
  ['64:ff9b:1::1', 'nat64-local'],
  ['2002:7f00:1::1', 'loopback'],
  ['2002:a9fe:a9fe::1', 'link-local'],
  ['2001:0:4136:e378::1', 'teredo'],
  ['2001:db8::1', 'documentation'],
  ['100::1', 'discard'],
  ['[::1]', 'loopback'],
  ['localhost', 'not-an-ip'],
  ['', 'not-an-ip'],
];

const allowed = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '11.0.0.2',
  '172.32.0.1',
  '172.15.255.255',
  '100.128.0.1',
  '192.169.0.1',
  '223.255.255.255',
  '9.255.255.255',
  '2606:4700:4700::1111',
  '2a00:1450:4001:82b::200e',
  '2a00:5:0:1::2',
  '::ffff:8.8.8.8',
  '64:ff9b::8.8.8.8',
  '2002:808:808::1',
  '2001:4860:4860::8888',
];

t.test('special-purpose addresses are refused, with the range named', async (t) => {
  for (const [ip, label] of refused) t.equal(blockedRange(ip), label, ip);
  t.equal(refused.length, 44);
});

t.test('global unicast addresses are allowed (IPv4 is not caught by an IPv4-mapped range)', async (t) => {
  for (const ip of allowed) t.equal(blockedRange(ip), null, ip);
});

t.test('every spelling of an address is judged by the address (URL parsing normalises it)', async (t) => {
  const policy = new OutboundPolicy({ allowPrivate: false, trusted: [] });
  const spellings = [
    'http://2130706433/',
    'http://0x7f000001/',
    'http://0177.0.0.1/',
    'http://0x7f.0x0.0x0.0x1/',
    'http://127.1/',
    'http://0/',
    'http://0.0.0.0:8080/',
    'http://[::ffff:127.0.0.1]/',
    'http://[0:0:0:0:0:ffff:7f00:1]/',
    'http://0xa9fea9fe/latest/meta-data/',
    'http://2852039166/',
    'http://169.254.169.254./',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[fd00::1]:80/',
    'http://[::]/',
    'http://%31%32%37.0.0.1/',
    'http://127.0.0.1%2e/',
    'https://10.0.0.1:8443/x',
  ];
  for (const url of spellings) t.throws(() => policy.assertUrl(url), OutboundRefused, url);
  for (const url of [
    'http://134744072/',
    'http://0x08080808/',
    'http://[::ffff:8.8.8.8]/',
    'https://ads.example.com/vast',
    'http://[2606:4700:4700::1111]:8080/',
  ]) {
    t.doesNotThrow(() => policy.assertUrl(url), url);
  }
});

t.test('only http and https', async (t) => {
  const policy = new OutboundPolicy({ allowPrivate: true, trusted: [] });
  for (const url of [
    'file:///etc/passwd',
    'gopher://example.com/',
    'ftp://example.com/x',
    'javascript:alert(1)',
    'data:text/plain,x',
    'not a url',
    'dict://127.0.0.1:6379/info',
  ]) {
    t.throws(() => policy.assertUrl(url), OutboundRefused, url);
  }
});

t.test('allowPrivate lets private addresses through; trusted names pass whatever they resolve to', async (t) => {
  const open = new OutboundPolicy({ allowPrivate: true, trusted: [] });
  t.doesNotThrow(() => open.assertUrl('http://127.0.0.1:9/'));
  const strict = new OutboundPolicy({
    allowPrivate: false,
    trusted: ['http://127.0.0.1:9', 'https://origin.internal', undefined, ''],
  });
  t.doesNotThrow(() => strict.assertUrl('http://127.0.0.1:9/x'), 'trusted host:port');
  t.throws(
    () => strict.assertUrl('http://127.0.0.1:10/x'),
    OutboundRefused,
    'another port of that host is not trusted',
  );
  t.ok(strict.isTrusted('ORIGIN.internal'), 'names compare case-insensitively');
  t.ok(strict.isTrusted('origin.internal') && !strict.isTrusted('origin.internal:8443'), 'the default port is implied');
});
