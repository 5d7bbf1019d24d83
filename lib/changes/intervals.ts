import {
  DESCRIBING_TOOLCHAIN,
  type ChangeOrderUpdateType,
  type Link,
  type PriorRevisions,
  type Unit,
} from '../model/entities.ts';
import { Conflict } from '../model/errors.ts';

/** Where a Unit's change starts and ends, and why it carries nothing (when it does not). */
export type Interval = { unit: Unit; start: number; end: number; skipped?: string } | { unit: Unit; excluded: string };

/** What decides one Unit's interval. */
export interface IntervalInput {
  unit: Unit;
  updateType: ChangeOrderUpdateType;
  /** The in-scope Links that follow this Unit by the ChangeOrder's type. */
  links: Link[];
  /** The revision the `--end-tag` marks on this Unit, when an end Tag was given (undefined: it marks none). */
  endTagged?: { revision?: number };
  prior: PriorRevisions;
  /** Names a Space for messages. */
  spaceName: (id: string) => string;
}

/**
 * One Unit's interval: from where the Spaces that follow it have merged to (their Links' cursor; with
 * none, where it was last released, or its head) to its head, or the revision the end Tag marks. A Unit
 * nothing follows carries nothing unless the prior-revisions mode is All. Links that disagree on the
 * start, or an end before the start, are refused.
 */
export function intervalOf(i: IntervalInput): Interval {
  const { unit: u, links, endTagged, prior } = i;
  if (u.ToolchainType === DESCRIBING_TOOLCHAIN) return { unit: u, excluded: 'ConfigHub/YAML units are not promoted' };
  if (i.updateType === 'MergeUnits' && !links.length)
    return { unit: u, excluded: 'nothing follows it by a MergeUnits link' };
  const cursors = [...new Set(links.map((l) => l.UpstreamLastMergedRevisionNum))];
  if (cursors.length > 1) {
    throw new Conflict(
      `unit '${u.Slug}': the links pointing at it disagree on where the change starts: ${links
        .map((l) => `${i.spaceName(l.SpaceID)} has merged to revision ${l.UpstreamLastMergedRevisionNum}`)
        .sort()
        .join(', ')}`,
    );
  }
  const start = cursors[0] ?? (u.LastReleasedRevisionNum || u.HeadRevisionNum);
  let end = endTagged ? (endTagged.revision ?? (prior === 'All' ? u.HeadRevisionNum : start)) : u.HeadRevisionNum;
  if (!links.length && !endTagged) end = prior === 'All' ? u.HeadRevisionNum : start;
  if (end < start)
    throw new Conflict(
      `unit '${u.Slug}': the downstream spaces have merged to revision ${start}, past the end of the change (${end})`,
    );
  if (start !== end) return { unit: u, start, end };
  return {
    unit: u,
    start,
    end,
    skipped: links.length
      ? `no change: the spaces that follow it have revision ${start}`
      : `no change: nothing follows it; marked at revision ${start}`,
  };
}
