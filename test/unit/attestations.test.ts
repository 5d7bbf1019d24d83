import { describe, expect, it } from 'vitest';
import {
  evaluateAttestationRequirement,
  type AttestationFacts,
  type AttestedUnit,
} from '../../lib/gates/attestations.ts';
import type { AttestationPrerequisite, AttestationView, Group, Space, User } from '../../lib/model/entities.ts';
import { allows } from '../../lib/model/entities.ts';

const NOW = new Date('2026-12-02T12:00:00Z');
const hoursAgo = (h: number) => new Date(NOW.getTime() - h * 3_600_000).toISOString();
const user = (slug: string, role: User['Role'] = 'Member'): User => ({
  OrganizationID: 'o',
  UserID: `id-${slug}`,
  Slug: slug,
  Role: role,
  CreatedAt: hoursAgo(1000),
  UpdatedAt: hoursAgo(1000),
  Version: 1,
});
const USERS = [user('dana'), user('alice'), user('bob'), user('carol'), user('vic', 'Viewer'), user('root', 'Admin')];
const GROUPS: Group[] = [
  {
    OrganizationID: 'o',
    GroupID: 'g-rm',
    Slug: 'release-managers',
    MemberUserIDs: ['id-carol'],
    CreatedAt: '',
    UpdatedAt: '',
    Version: 1,
  },
];
const space = (over: Partial<Space> = {}): Space => ({
  OrganizationID: 'o',
  SpaceID: 's1',
  Slug: 'acme-staging',
  Labels: {},
  Annotations: {},
  CreatedAt: '',
  UpdatedAt: '',
  Version: 1,
  ...over,
});
/** deployment revision 3 (content h3), written by dana. */
const unit = (over: Partial<AttestedUnit> = {}): AttestedUnit => ({
  slug: 'deployment',
  unitId: 'u1',
  revision: 3,
  dataHash: 'h3',
  authors: ['id-dana'],
  ...over,
});
let n = 0;
const att = (by: string, over: Partial<AttestationView> = {}): AttestationView => ({
  OrganizationID: 'o',
  SpaceID: 's1',
  AttestationID: `a${++n}`,
  Slug: `a${n}`,
  Labels: {},
  Annotations: {},
  CreatedAt: hoursAgo(1),
  UpdatedAt: hoursAgo(1),
  Version: 1,
  UserID: `id-${by}`,
  Type: 'Approval',
  Result: 'Pass',
  Claims: {},
  Revisions: [{ UnitID: 'u1', RevisionNum: 3, DataHash: 'h3' }],
  ...over,
});
const facts = (attestations: AttestationView[], s: Space = space()): AttestationFacts => ({
  now: NOW,
  space: s,
  attestations,
  users: USERS,
  groups: GROUPS,
});
const two: AttestationPrerequisite = { Name: 'two-approvers', Count: 2 };
const check = (req: AttestationPrerequisite, atts: AttestationView[], u: AttestedUnit = unit(), s?: Space) =>
  evaluateAttestationRequirement(req, [u], facts(atts, s));

describe('attestation requirements, as the spec says', () => {
  it('counts distinct eligible users, and says which revision has how many', () => {
    expect(check(two, [])).toEqual({
      ok: false,
      message:
        'requires two-approvers: 2 Approval attestation(s) from eligible attesters who did not write the change; deployment revision 3 has 0 of 2',
    });
    expect(check(two, [att('alice'), att('alice')]).message).toMatch(/deployment revision 3 has 1 of 2$/);
    expect(check(two, [att('alice'), att('bob')]).ok).toBe(true);
  });

  it('never counts an author of the change there (the promoter wrote the promotion’s revisions), unless AllowAuthors', () => {
    expect(check(two, [att('dana'), att('alice')]).message).toMatch(/has 1 of 2$/);
    expect(check({ ...two, AllowAuthors: true }, [att('dana'), att('alice')]).ok).toBe(true);
  });

  it('covers the revision approved and later ones with identical content, nothing else', () => {
    // A no-op edit (revision 4, same content) needs no new approval.
    expect(check(two, [att('alice'), att('bob')], unit({ revision: 4, dataHash: 'h3' })).ok).toBe(true);
    // A content change does.
    expect(check(two, [att('alice'), att('bob')], unit({ revision: 5, dataHash: 'h5' })).message).toMatch(
      /deployment revision 5 has 0 of 2$/,
    );
    // An approval of a later revision does not cover an earlier one, nor another Unit.
    expect(
      check(two, [att('alice', { Revisions: [{ UnitID: 'u1', RevisionNum: 4, DataHash: 'h3' }] }), att('bob')]).message,
    ).toMatch(/has 1 of 2$/);
    expect(
      check(two, [att('alice', { Revisions: [{ UnitID: 'u2', RevisionNum: 3, DataHash: 'h3' }] }), att('bob')]).message,
    ).toMatch(/has 1 of 2$/);
  });

  it('stops counting an expired approval, one older than MaxAge, and a revoked one', () => {
    expect(check(two, [att('alice', { ExpiresAt: hoursAgo(0.5) }), att('bob')]).message).toMatch(/has 1 of 2$/);
    expect(check(two, [att('alice', { ExpiresAt: hoursAgo(-1) }), att('bob')]).ok).toBe(true);
    expect(check({ ...two, MaxAge: '72h' }, [att('alice', { CreatedAt: hoursAgo(73) }), att('bob')]).message).toMatch(
      /has 1 of 2$/,
    );
    expect(check({ ...two, MaxAge: '72h' }, [att('alice', { CreatedAt: hoursAgo(71) }), att('bob')]).ok).toBe(true);
    expect(check(two, [att('alice', { RevokedBy: 'r1' }), att('bob')]).message).toMatch(/has 1 of 2$/);
  });

  it('a rejection from an eligible user blocks until revoked, unless IgnoreFail', () => {
    const reject = att('bob', { Result: 'Fail', Note: 'breaks the EU ingress' });
    expect(check({ Name: 'one', Count: 1 }, [att('alice'), reject]).message).toBe(
      'requires one: 1 Approval attestation(s) from eligible attesters who did not write the change; deployment revision 3 was rejected by bob (breaks the EU ingress)',
    );
    expect(check({ Name: 'one', Count: 1, IgnoreFail: true }, [att('alice'), reject]).ok).toBe(true);
    expect(check({ Name: 'one', Count: 1 }, [att('alice'), { ...reject, RevokedBy: 'r2' }]).ok).toBe(true);
    // A rejection from someone who could not count (the author) does not block.
    expect(check({ Name: 'one', Count: 1 }, [att('alice'), att('dana', { Result: 'Fail' })]).ok).toBe(true);
  });

  it('FromUserIDs and FromGroupIDs limit who counts (by ID or slug); otherwise anyone with Approve in the Space', () => {
    const rm: AttestationPrerequisite = { Name: 'release-manager', FromGroupIDs: ['release-managers'] };
    expect(check(rm, [att('alice')]).message).toMatch(/has 0 of 1$/);
    expect(check(rm, [att('carol')]).ok).toBe(true);
    expect(check({ Name: 'named', FromUserIDs: ['id-bob'] }, [att('alice')]).ok).toBe(false);
    expect(check({ Name: 'named', FromUserIDs: ['id-bob'] }, [att('bob')]).ok).toBe(true);
    // A Viewer has no Approve by default; a Space naming Approve grants exactly whom it names (and Admins).
    expect(check({ Name: 'one' }, [att('vic')]).ok).toBe(false);
    const restricted = space({ Permissions: { Approve: { UserIDs: [], GroupIDs: ['g-rm'] } } });
    expect(check({ Name: 'one' }, [att('alice')], unit(), restricted).ok).toBe(false);
    expect(check({ Name: 'one' }, [att('carol')], unit(), restricted).ok).toBe(true);
    expect(check({ Name: 'one' }, [att('root')], unit(), restricted).ok).toBe(true);
  });

  it('only its own Type counts', () => {
    expect(check({ Name: 'cr', Type: 'ChangeRecord' }, [att('alice')]).ok).toBe(false);
    expect(check({ Name: 'cr', Type: 'ChangeRecord' }, [att('alice', { Type: 'ChangeRecord' })]).ok).toBe(true);
  });
});

describe('who may do what in a Space', () => {
  const caller = (role: User['Role'], groups: string[] = []) => ({
    OrganizationID: 'o',
    UserID: 'u',
    Role: role,
    GroupIDs: groups,
  });
  it('role defaults: Admin everything, Member View/Edit/Approve, Viewer View; ReportStatus only Admin by default', () => {
    const s = space();
    expect(
      ['View', 'Edit', 'Approve', 'Manage', 'ReportStatus'].map((v) => allows(caller('Admin'), s, v as never)),
    ).toEqual([true, true, true, true, true]);
    expect(
      ['View', 'Edit', 'Approve', 'Manage', 'ReportStatus'].map((v) => allows(caller('Member'), s, v as never)),
    ).toEqual([true, true, true, false, false]);
    expect(
      ['View', 'Edit', 'Approve', 'Manage', 'ReportStatus'].map((v) => allows(caller('Viewer'), s, v as never)),
    ).toEqual([true, false, false, false, false]);
  });
  it('a verb the Space names goes to whom it names; a service token only reports status, in its Spaces', () => {
    const s = space({
      Permissions: { Edit: { UserIDs: ['u'], GroupIDs: [] }, View: { UserIDs: [], GroupIDs: ['g'] } },
    });
    expect(allows(caller('Viewer'), s, 'Edit')).toBe(true);
    expect(allows(caller('Member'), s, 'View')).toBe(false);
    expect(allows(caller('Member', ['g']), s, 'View')).toBe(true);
    const service = {
      OrganizationID: 'o',
      UserID: 't',
      Service: { Name: 'argocd', Scope: 'ReportStatus' as const, SpaceIDs: ['s1'], RequireSignature: false },
    };
    expect([
      allows(service, s, 'ReportStatus'),
      allows(service, space({ SpaceID: 's2' }), 'ReportStatus'),
      allows(service, s, 'View'),
      allows(service, s, 'Edit'),
    ]).toEqual([true, false, false, false]);
  });
});
