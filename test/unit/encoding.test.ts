import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { acceptsGzip, encodeAnswer, GZIP_FROM_BYTES } from '../../lib/api/encoding.ts';

describe('a large answer, as the API Lambda returns it to API Gateway', () => {
  const big = JSON.stringify({ Spaces: Array.from({ length: 2000 }, (_, i) => ({ SpaceSlug: `prod-${i}` })) });

  it('is gzipped and base64-encoded, marked so, when the client accepts gzip', () => {
    expect(big.length).toBeGreaterThan(GZIP_FROM_BYTES);
    const out = encodeAnswer(
      { statusCode: 200, headers: { 'content-type': 'application/json' }, body: big },
      'gzip, deflate, br',
    );
    expect(out).toMatchObject({
      statusCode: 200,
      isBase64Encoded: true,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', vary: 'accept-encoding' },
    });
    expect(gunzipSync(Buffer.from(out.body!, 'base64')).toString('utf8')).toBe(big);
  });

  it('is left as it is when small, when gzip is not accepted, or when it is binary already', () => {
    const small = { statusCode: 200, body: '{"a":1}' };
    expect(encodeAnswer(small, 'gzip')).toBe(small);
    const plain = { statusCode: 200, body: big };
    expect(encodeAnswer(plain, undefined)).toBe(plain);
    expect(encodeAnswer(plain, 'identity')).toBe(plain);
    expect(encodeAnswer(plain, 'gzip;q=0')).toBe(plain);
    const binary = { statusCode: 200, body: Buffer.from(big).toString('base64'), isBase64Encoded: true };
    expect(encodeAnswer(binary, 'gzip')).toBe(binary);
  });

  it('reads Accept-Encoding as HTTP does: codings by name, a q of 0 refusing one, * for any', () => {
    expect(acceptsGzip('GZIP')).toBe(true);
    expect(acceptsGzip('br;q=1.0, gzip;q=0.5')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('gzip;q=0, br')).toBe(false);
    expect(acceptsGzip('x-gzip')).toBe(false);
    expect(acceptsGzip('')).toBe(false);
  });
});
