/** Where progress goes: standard error, drawn only when it is a terminal. */
export interface Terminal {
  isTTY?: boolean;
  write(s: string): unknown;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * Runs `work` showing `label` and the seconds it has taken on one redrawn line of standard error, and
 * clears the line when it ends. When standard error is not a terminal (a pipeline, a log, a test) it
 * writes nothing at all. `now` and `every` are passed in so a test draws deterministically.
 */
export async function withProgress<T>(label: string, work: Promise<T>, opts: { stream?: Terminal; now?: () => number; every?: number } = {}): Promise<T> {
  const stream = opts.stream ?? process.stderr;
  if (!stream.isTTY) return work;
  const now = opts.now ?? Date.now;
  const start = now();
  let frame = 0;
  const draw = () => stream.write(`\r${FRAMES[frame++ % FRAMES.length]} ${label} ${((now() - start) / 1000).toFixed(1)}s`);
  draw();
  const timer = setInterval(draw, opts.every ?? 100);
  try {
    return await work;
  } finally {
    clearInterval(timer);
    stream.write('\r\x1b[K');
  }
}
