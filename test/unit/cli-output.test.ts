import { afterEach, describe, expect, it, vi } from 'vitest';
import { colours, failed, table } from '../../cli/output.ts';
import { withProgress } from '../../cli/progress.ts';

/** A stream that records what was written, a terminal or not. */
const stream = (isTTY: boolean) => {
  const written: string[] = [];
  return { isTTY, written, write: (s: string) => written.push(s) };
};

afterEach(() => {
  vi.useRealTimers();
});

describe('progress on standard error', () => {
  it('redraws one line with the seconds taken while the work runs, and clears it when done', async () => {
    vi.useFakeTimers();
    let t = 1_000;
    const tty = stream(true);
    let finish!: (v: string) => void;
    const work = new Promise<string>((resolve) => (finish = resolve));
    const shown = withProgress('promoting acme-base/bump into prod', work, { stream: tty, now: () => t, every: 100 });
    t += 100;
    await vi.advanceTimersByTimeAsync(100);
    t += 1_150;
    await vi.advanceTimersByTimeAsync(100);
    finish('landed');
    expect(await shown).toBe('landed');
    expect(tty.written).toEqual([
      '\r⠋ promoting acme-base/bump into prod 0.0s',
      '\r⠙ promoting acme-base/bump into prod 0.1s',
      '\r⠹ promoting acme-base/bump into prod 1.3s',
      '\r\x1b[K',
    ]);
    // Nothing more is drawn once it has ended.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(tty.written).toHaveLength(4);
  });

  it('clears its line when the work fails, and the failure is the caller’s to report', async () => {
    const tty = stream(true);
    await expect(
      withProgress('publishing', Promise.reject(new Error('HTTP 409')), { stream: tty, now: () => 0 }),
    ).rejects.toThrow('HTTP 409');
    expect(tty.written.at(-1)).toBe('\r\x1b[K');
  });

  it('writes nothing at all when standard error is not a terminal', async () => {
    const pipe = stream(false);
    expect(await withProgress('publishing', Promise.resolve(7), { stream: pipe })).toBe(7);
    expect(pipe.written).toEqual([]);
  });
});

describe('colours', () => {
  it('only on a terminal, never with NO_COLOR or a dumb terminal', () => {
    expect(colours({ isTTY: true }, {})).toBe(true);
    expect(colours({ isTTY: false }, {})).toBe(false);
    expect(colours({}, {})).toBe(false);
    expect(colours({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colours({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    // no-color.org: an empty NO_COLOR does not turn colour off.
    expect(colours({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
  });

  it('a failure is red on a colour terminal and plain elsewhere', () => {
    const tty = stream(true);
    failed('HTTP 409: stale', tty, {});
    failed('HTTP 409: stale', tty, { NO_COLOR: 'yes' });
    const pipe = stream(false);
    failed('HTTP 409: stale', pipe, {});
    expect([...tty.written, ...pipe.written]).toEqual([
      '\x1b[31mFailed:\x1b[0m HTTP 409: stale\n',
      'Failed: HTTP 409: stale\n',
      'Failed: HTTP 409: stale\n',
    ]);
  });

  it('a table header is bold only when asked', () => {
    const rows = [{ Slug: 'acme-dev' }];
    expect(table(rows, [['Name', (r) => r.Slug]], true)).toBe('\x1b[1mNAME\x1b[0m\nacme-dev\n');
    expect(table(rows, [['Name', (r) => r.Slug]], false)).toBe('NAME\nacme-dev\n');
  });
});
