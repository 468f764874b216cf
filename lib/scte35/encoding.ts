/** Payload text to bytes: base64 (standard or URL-safe, padding optional), `0x…` hex or bare hex. */
import { Scte35Error } from './errors.js';

export type Scte35Payload = string | Uint8Array;

const HEX = /^[0-9a-fA-F]+$/;
const B64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

export function payloadBytes(payload: Scte35Payload): Uint8Array {
  if (payload instanceof Uint8Array) return payload;
  if (typeof payload !== 'string') throw new Scte35Error('encoding', 'payload is neither a string nor bytes', 0);
  const s = payload.trim();
  if (s.startsWith('0x') || s.startsWith('0X')) {
    const h = s.slice(2);
    if (h.length === 0 || h.length % 2 !== 0 || !HEX.test(h)) throw new Scte35Error('encoding', 'bad hex after 0x', 0);
    return Buffer.from(h, 'hex');
  }
  // A section starts with table_id 0xFC, which base64 spells "/D": all-hex text of even length is hex.
  if (s.length % 2 === 0 && HEX.test(s)) return Buffer.from(s, 'hex');
  if (!B64.test(s) || s.replace(/=+$/, '').length % 4 === 1)
    throw new Scte35Error('encoding', 'neither base64 nor hex', 0);
  if (s.length % 4 !== 0 && s.endsWith('=')) throw new Scte35Error('encoding', 'bad base64 padding', 0);
  return Buffer.from(s, 'base64');
}
