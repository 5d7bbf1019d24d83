import { describe, expect, it } from 'vitest';
import { effectiveProgress, selectedUnits } from '../../lib/changes/selection.ts';
import type { ChangeDeps } from '../../lib/changes/ports.ts';
import type { CoMarks } from '../../lib/changes/marks.ts';
import type { ChangeOrder, Mark, Progress, Space, Unit } from '../../lib/model/entities.ts';

const space = (id: string, slug: string): Space => ({
  OrganizationID: 'o',
  SpaceID: id,
  Slug: slug,
  Labels: {},
  Annotations: {},
  CreatedAt: '',
  UpdatedAt: '',
  Version: 1,
});
const unit = (id: string, spaceId: string, tier: string, toolchain: Unit['ToolchainType'] = 'Kubernetes/YAML'): Unit =>
  ({
    OrganizationID: 'o',
    SpaceID: spaceId,
    UnitID: id,
    Slug: id,
    Labels: { tier },
    Annotations: {},
    ToolchainType: toolchain,
    HeadRevisionNum: 1,
    LastReleasedRevisionNum: 0,
    UpstreamRevisionNum: 0,
    Conflicts: [],
    ProtectedPaths: [],
    DataHash: '',
    DataSize: 0,
    ValidationErrors: {},
    CreatedAt: '',
    UpdatedAt: '',
    Version: 1,
  }) as Unit;
const co = (whereUnit: string): ChangeOrder =>
  ({
    UpdateType: 'Invoke',
    WhereUnit: whereUnit,
    Invocation: { Slug: 'set-image', ToolchainType: 'Kubernetes/YAML', FunctionInvocations: [] },
  }) as unknown as ChangeOrder;
const mark = (unitId: string): Mark => ({ TagID: 'end', UnitID: unitId, SpaceID: '', RevisionNum: 2, UpdatedAt: '' });
const marks = (...ids: string[]): CoMarks => ({
  start: new Map(),
  end: new Map(ids.map((id) => [id, mark(id)])),
  publish: new Map(),
  restore: new Map(),
});

describe('an Invoke change order’s selection, asked again on every read', () => {
  const dev = space('s-dev', 'web-dev');
  const prod = space('s-prod', 'web-prod');
  const units: Record<string, Unit[]> = {
    's-dev': [
      unit('a', 's-dev', 'frontend'),
      unit('b', 's-dev', 'backend'),
      unit('c', 's-dev', 'frontend', 'ConfigHub/YAML'),
    ],
    's-prod': [unit('d', 's-prod', 'frontend')],
  };
  const deps = { store: { listUnits: async (id: string) => units[id] ?? [] } } as unknown as ChangeDeps;
  const progress: Progress[] = [
    { ChangeOrderID: 'co', SpaceID: 's-dev', ResolvedAt: 't', Version: 1 },
    { ChangeOrderID: 'co', SpaceID: 's-prod', ResolvedAt: 't', Version: 1 },
  ];
  const spaces = new Map([dev, prod].map((s) => [s.SpaceID, s]));

  it('picks Units of the Invocation’s toolchain the where selects, never describing ones', () => {
    expect(selectedUnits(co("Labels.tier = 'frontend'"), dev, units['s-dev']!).map((u) => u.UnitID)).toEqual(['a']);
  });

  it('a Space reads as having taken it only while every Unit it selects carries the end mark', async () => {
    expect(
      (await effectiveProgress(deps, co("Labels.tier = 'frontend'"), progress, spaces, marks('a', 'd'))).map(
        (p) => p.SpaceID,
      ),
    ).toEqual(['s-dev', 's-prod']);
    // A frontend Unit added to prod since it was promoted: prod has not taken it.
    units['s-prod']!.push(unit('e', 's-prod', 'frontend'));
    expect(
      (await effectiveProgress(deps, co("Labels.tier = 'frontend'"), progress, spaces, marks('a', 'd'))).map(
        (p) => p.SpaceID,
      ),
    ).toEqual(['s-dev']);
  });

  it('reads a selection naming the Space the way promotion does', async () => {
    const bySpace = co("Labels.tier = 'frontend' AND SpaceSlug = 'web-dev'");
    // In prod it selects nothing, so prod reads as taken; in dev it selects a, which carries the mark.
    expect((await effectiveProgress(deps, bySpace, progress, spaces, marks('a'))).map((p) => p.SpaceID)).toEqual([
      's-dev',
      's-prod',
    ]);
    expect((await effectiveProgress(deps, bySpace, progress, spaces, marks())).map((p) => p.SpaceID)).toEqual([
      's-prod',
    ]);
  });
});
