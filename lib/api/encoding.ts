/**
 * An answer gzipped for a client that accepts it. A Lambda behind API Gateway may answer at most 6 MB, and the
 * whole answer of a 10,000-Space job is about 17 MB of JSON (some 1.7 KB a Space, its Units and their revisions):
 * gzipped it is a tenth of that. Small answers are sent as they are (compressing them saves nothing that matters).
 */
import { gzipSync } from 'node:zlib';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/** Answers at least this large are gzipped when the client accepts gzip. */
export const GZIP_FROM_BYTES = 32 * 1024;

/** Whether an Accept-Encoding header accepts gzip (not refused with q=0). Pure. */
export function acceptsGzip(header: string | undefined): boolean {
  return (header ?? '').split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && !(q && Number(q.slice(2)) === 0);
  });
}

/** The answer as sent: gzipped and base64-encoded (as API Gateway takes a binary body) when it is large and accepted. Pure. */
export function encodeAnswer(
  result: APIGatewayProxyStructuredResultV2,
  acceptEncoding: string | undefined,
): APIGatewayProxyStructuredResultV2 {
  const body = result.body ?? '';
  if (result.isBase64Encoded || Buffer.byteLength(body) < GZIP_FROM_BYTES || !acceptsGzip(acceptEncoding))
    return result;
  return {
    ...result,
    headers: { ...result.headers, 'content-encoding': 'gzip', vary: 'accept-encoding' },
    body: gzipSync(body).toString('base64'),
    isBase64Encoded: true,
  };
}
