import { inForce, type GateResult, type Hold, type HoldBlock } from '../model/entities.ts';

/** What an action is about to touch: the Spaces it goes into, and (a promotion's) the workflow its ChangeOrder copied. */
export interface HoldSubject {
  action: HoldBlock;
  spaceIds: string[];
  changeWorkflowId?: string;
  /** The ChangeOrder promoted (a recall's hold freezes it alone). */
  changeOrderId?: string;
}

/** Whether a hold, in force or not, covers a subject: blocks its action over its Spaces, workflow, ChangeOrder or organization. Pure. */
export function holdCovers(h: Hold, subject: HoldSubject, spaces = new Set(subject.spaceIds)): boolean {
  if (!h.Blocks.includes(subject.action)) return false;
  return h.Scope === 'Organization'
    ? true
    : h.Scope === 'Space'
      ? spaces.has(h.SpaceID ?? '')
      : h.Scope === 'ChangeOrder'
        ? !!subject.changeOrderId && h.ChangeOrderID === subject.changeOrderId
        : !!subject.changeWorkflowId && h.ChangeWorkflowID === subject.changeWorkflowId;
}

/** The holds in force at `now` that cover a subject: its Spaces, its workflow, or the whole organization. Pure. */
export function holdsOn(holds: Hold[], subject: HoldSubject, now: Date): Hold[] {
  const spaces = new Set(subject.spaceIds);
  return holds
    .filter((h) => inForce(h, now) && holdCovers(h, subject, spaces))
    .sort((a, b) => (a.Slug < b.Slug ? -1 : 1));
}

/** A hold as a gate that does not hold: its name, owner, reason and expiry, and how to get past it. */
export function holdGate(h: Hold, names: { owner: string; space?: string }): GateResult {
  const covers =
    h.Scope === 'Organization'
      ? 'the organization'
      : h.Scope === 'Space'
        ? `space '${names.space ?? h.SpaceID}'`
        : h.Scope === 'ChangeOrder'
          ? 'this change order'
          : 'this workflow';
  return {
    Prerequisite: 'Hold',
    Satisfied: false,
    SpaceID: h.SpaceID ?? '',
    SpaceSlug: names.space ?? '',
    Message: `hold '${h.Slug}' on ${covers} is in force (placed by ${names.owner}${h.ExpiresAt ? `, until ${h.ExpiresAt}` : ''}): ${h.Reason}; lift it (cub hold lift ${h.Slug}) or pass it with --force --force-reason`,
    Evidence: {
      Hold: h.Slug,
      Scope: h.Scope,
      Covers: covers,
      Owner: names.owner,
      Reason: h.Reason,
      Blocks: h.Blocks,
      ExpiresAt: h.ExpiresAt ?? null,
      PlacedAt: h.CreatedAt,
    },
    Opens: `${h.ExpiresAt ? `its expiry at ${h.ExpiresAt}, or ` : ''}its owner (${names.owner}) or an Admin lifting it (or a promotion with --force --force-reason): cub hold lift ${h.Slug} --note "lifted to promote"`,
  };
}
