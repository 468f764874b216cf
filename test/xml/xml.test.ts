/**
 * The XML door's own error type (issue 28 item 3): lib/xml throws XmlError; lib/ads rethrows it as
 * AdXmlError, a subclass, for its callers. The door's caps and DOCTYPE refusal are pinned in
 * test/ads/xml.test.ts, through the ads' wrapper.
 */
import t from 'tap';
import { XmlError, parseXml } from '../../lib/xml/index.js';
import { AdXmlError, parseXml as parseAdXml } from '../../lib/ads/xml.js';

t.test('XmlError from the door, AdXmlError from the ads’ wrapper, same code and message', async (t) => {
  const bad = '<a><b></a>';
  let door: unknown;
  let ads: unknown;
  try {
    parseXml(bad);
  } catch (err) {
    door = err;
  }
  try {
    parseAdXml(bad);
  } catch (err) {
    ads = err;
  }
  t.ok(door instanceof XmlError);
  t.notOk(door instanceof AdXmlError);
  t.equal((door as XmlError).name, 'XmlError');
  t.ok(ads instanceof AdXmlError);
  t.ok(ads instanceof XmlError, 'a subclass: catching XmlError catches both');
  t.equal((ads as AdXmlError).name, 'AdXmlError');
  t.equal((ads as AdXmlError).code, (door as XmlError).code);
  t.equal((ads as AdXmlError).message, (door as XmlError).message);
  t.throws(() => parseXml('<!DOCTYPE x><x/>'), { name: 'XmlError', code: 'doctype' });
  t.equal(parseAdXml('<VAST/>').documentElement!.nodeName, 'VAST');
});
