/** The most items one DynamoDB TransactWriteItems call may hold (slug claims and marks included). */
export const TRANSACTION_MAX_ITEMS = 100;

/** Splits a list into consecutive pieces of at most `size` items. */
export function chunk<T>(items: T[], size: number): T[][] {
  if (size < 1) throw new RangeError(`chunk size must be at least 1, not ${size}`);
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
