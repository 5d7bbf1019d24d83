/** `cub variant promote --change-order`: a ChangeOrder carried into the next Stage, a named Stage, or one Space. */
import { bool, flag, UsageError, type Args } from '../args.ts';
import { ApiError, Client, type Answer } from '../client.ts';
import type { ChangeOrderPromotion, PromotedUnit } from '../api.ts';
import { failed, print } from '../output.ts';
import { withProgress } from '../progress.ts';
import { out, printUnitResults } from '../common.ts';
import { explainChangeOrder } from './changeorder-view.ts';

/** Promotes a ChangeOrder (`--change-order`) into the next Stage, `--target-stage`, or one Space; `--dry-run --explain` explains instead. */
export async function promoteChangeOrder(a: Args, c: Client, co: string, space: string | undefined): Promise<void> {
  if (bool(a, 'explain')) {
    if (!bool(a, 'dry-run')) throw new UsageError('--explain goes with --dry-run: it explains, and promotes nothing');
    // The same state, the same exit status as --dry-run alone: a blocked promotion is 1.
    const r = await explainChangeOrder(a, c, co);
    if (r.Gates.length && !r.Open) process.exitCode = 1;
    return;
  }
  const body = {
    ChangeOrderID: co,
    TargetStage: flag(a, 'target-stage'),
    Space: space,
    WhereSpace: flag(a, 'where-space'),
    DryRun: bool(a, 'dry-run') || undefined,
    PriorRevisions: flag(a, 'prior-revisions'),
    Force: bool(a, 'force') || undefined,
    ForceReason: flag(a, 'force-reason'),
    // Accepted for an Invoke change order (its Invocation's writes are protected); the server refuses it for a merge.
    Protect: bool(a, 'protect') || undefined,
    Async: bool(a, 'async') || bool(a, 'detach') || undefined,
  };
  if (flag(a, 'tag') !== undefined)
    throw new UsageError("--tag is refused with --change-order: the change order's own tags mark what it promotes");
  let r;
  try {
    const label = `${body.DryRun ? 'planning' : 'promoting'} ${co}${body.TargetStage ? ` into ${body.TargetStage}` : ''}`;
    // A large stage (or --async) runs as a job: followed to its end, then shown as the request's own answer.
    r = await c.settle<ChangeOrderPromotion>(
      await withProgress<Answer<unknown>>(label, c.post<unknown>('/promote', body)),
      label,
      { detach: bool(a, 'detach') },
    );
  } catch (e) {
    if (e instanceof ApiError && e.status === 409 && e.message.startsWith('unable to promote')) {
      failed(e.message);
      process.exitCode = 1;
      return;
    }
    throw e;
  }
  const format = out(a);
  if (format === 'json' || format === 'yaml') return print(r.body, format);
  if (format === 'mutations')
    return printUnitResults(
      r.body.Spaces.flatMap((s) => s.Units.map((u) => ({ ...u, UnitSlug: `${s.SpaceSlug}/${u.UnitSlug}` }))),
      'mutations',
    );
  if (r.body.Message && !r.body.Spaces.length) {
    process.stdout.write(`${r.body.Message}\n`);
    return;
  }
  process.stdout.write(
    `${r.body.DryRun ? 'Would promote' : 'Promoted'} change order into ${r.body.Stage ? `stage '${r.body.Stage}'` : 'the named spaces'}: ${r.body.Landed} of ${r.body.Total} space(s)${r.body.Forced ? ' (forced past failing gates)' : ''}\n`,
  );
  print(
    r.body.Spaces.flatMap((s) =>
      s.Units.length ? s.Units.map((u): { s: typeof s; u?: PromotedUnit } => ({ s, u })) : [{ s, u: undefined }],
    ),
    'table',
    [
      ['Space', (x) => x.s.SpaceSlug],
      ['SpaceAction', (x) => x.s.Action],
      ['Unit', (x) => x.u?.UnitSlug ?? ''],
      ['Action', (x) => x.u?.Action ?? ''],
      ['Reason', (x) => x.u?.Reason ?? ''],
      ['Revisions', (x) => (x.u?.RevisionNums ?? []).join(',')],
      ['Error', (x) => x.u?.Error?.Message ?? (x.u ? '' : (x.s.Error ?? ''))],
    ],
  );
  if (r.status === 207) {
    failed(r.body.Message ?? 'some spaces did not take the change');
    process.exitCode = 1;
  }
}
