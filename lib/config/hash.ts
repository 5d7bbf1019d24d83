import { createHash } from 'node:crypto';
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';

/** sha256 of the exact data bytes, hex: a Unit's `DataHash`. */
export function dataHash(data: string): string {
  return createHash('sha256').update(data, 'utf8').digest('hex');
}

/** Compresses unit data for storage (brotli, base64 so it travels as a string attribute). */
export function compress(data: string): string {
  return brotliCompressSync(Buffer.from(data, 'utf8'), { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }).toString(
    'base64',
  );
}

/** The inverse of `compress`. */
export function decompress(stored: string): string {
  return brotliDecompressSync(Buffer.from(stored, 'base64')).toString('utf8');
}
