/** A promotion explained: the plan and its gates, each with what it read and what would open it; nothing is written. */
import type { ChangeDeps } from '../ports.ts';
import { gate } from './gates.ts';
import { takeBackCommand } from '../recall.ts';

import type { PromoteOptions } from './types.ts';
import type { Known } from '../stages.ts';
import type { Explanation, Caller, ChangeOrder, Space } from '../../model/entities.ts';

/** Why a promotion into the next Stage (or the one named) would or would not go ahead: every gate, with what it read and what would open it. */
/** Explains the next promotion of a ChangeOrder (or into `targetStage`, or into named Spaces): reads only. */
export async function explainPromotion(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  base: Space,
  o: Pick<PromoteOptions, 'targetStage' | 'spaces' | 'whereSpace'>,
  known?: Known,
): Promise<Explanation> {
  const g = await gate(deps, caller, co, base, { ...o, dryRun: true, explain: true }, known);
  const pick = (s: Space) => ({ SpaceID: s.SpaceID, SpaceSlug: s.Slug });
  if ('early' in g)
    return {
      ChangeOrderID: co.ChangeOrderID,
      Slug: co.Slug,
      Targets: [],
      Over: [],
      Open: false,
      Gates: [],
      Message: 'result' in g.early ? g.early.result.Message : undefined,
    };
  if (!('explained' in g)) throw new Error('unreachable: an explanation stops at the gates');
  const e = g.explained;
  const failed = await failedTargets(deps, co, e.targets);
  return {
    ChangeOrderID: co.ChangeOrderID,
    Slug: co.Slug,
    ...(e.stageName ? { Stage: e.stageName } : {}),
    Targets: e.targets.map(pick),
    Over: e.before.map(pick),
    Open: e.failedGates.length === 0,
    Gates: e.gates,
    ...(e.message ? { Message: e.message } : {}),
    ...(failed.length ? { Failed: failed } : {}),
    ...recalled(co, base),
  };
}

/** A recalled ChangeOrder's recall, with the one command that takes it back out while nothing has. */
function recalled(co: ChangeOrder, base: Space): Pick<Explanation, 'Recall'> {
  if (!co.Recall) return {};
  const demoted = (co.Demotions ?? []).some((d) => d.StartedAt >= co.Recall!.RecalledAt);
  return {
    Recall: { ...co.Recall, ...(demoted || co.Recall.Demote ? {} : { Command: takeBackCommand(base.Slug, co) }) },
  };
}

/** The Spaces a promotion would go to whose last promotion failed or was blocked there, and have not taken the change since: why, as recorded. */
async function failedTargets(
  deps: ChangeDeps,
  co: ChangeOrder,
  targets: Space[],
): Promise<NonNullable<Explanation['Failed']>> {
  if (!co.PromotionFailures?.length || !targets.length) return [];
  const taken = new Set(
    (await deps.store.progressOf(co.ChangeOrderID)).filter((p) => !p.RestoredAt).map((p) => p.SpaceID),
  );
  const out: NonNullable<Explanation['Failed']> = [];
  for (const t of targets) {
    if (taken.has(t.SpaceID)) continue;
    const last = [...co.PromotionFailures].reverse().find((f) => f.Spaces.some((x) => x.SpaceID === t.SpaceID));
    const entry = last?.Spaces.find((x) => x.SpaceID === t.SpaceID);
    if (!last || !entry) continue;
    const error = entry.Error ?? entry.Units.map((u) => `${u.UnitSlug}: ${u.Error}`).join('; ');
    out.push({ SpaceID: t.SpaceID, SpaceSlug: t.Slug, FailedAt: last.FailedAt, Error: error || entry.Action });
  }
  return out;
}
