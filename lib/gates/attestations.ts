import {
  allows,
  parseDuration,
  type AttestationPrerequisite,
  type AttestationView,
  type Group,
  type Space,
  type User,
} from '../model/entities.ts';

/** One revision an attestation requirement reads: what a Release of the change bundles in a Space, or what one does bundle. */
export interface AttestedUnit {
  slug: string;
  unitId: string;
  revision: number;
  dataHash: string;
  /** Who wrote a revision of the change in this Space, from its start through `revision`: they never count. */
  authors: string[];
}

/** Who attested what in one Space, and who may, read at evaluation time. */
export interface AttestationFacts {
  now: Date;
  space: Space;
  /** The Space's attestations naming the revisions weighed (by Unit and content; explaining, any content of those Units), revoked ones marked. */
  attestations: AttestationView[];
  users: User[];
  groups: Group[];
}

/** Whether an attestation speaks for a revision: it names that revision, or an earlier one of the Unit with identical content. */
export function covers(a: AttestationView, u: AttestedUnit): boolean {
  return a.Revisions.some((r) => r.UnitID === u.unitId && r.RevisionNum <= u.revision && r.DataHash === u.dataHash);
}

/** Whether it still counts at `now`: not revoked, not expired, not older than MaxAge. */
export function current(a: AttestationView, now: Date, maxAge: string | undefined): boolean {
  if (a.RevokedBy || a.RevokedAttestationID) return false;
  if (a.ExpiresAt && Date.parse(a.ExpiresAt) <= now.getTime()) return false;
  const age = maxAge ? parseDuration(maxAge) : undefined;
  return !(age !== undefined && Date.parse(a.CreatedAt) + age <= now.getTime());
}

/**
 * Whether a user's attestation can count for a requirement in a Space: FromUserIDs / FromGroupIDs
 * (IDs or slugs) when given, else anyone with Approve there; never an author of the change unless
 * AllowAuthors.
 */
export function eligible(req: AttestationPrerequisite, userId: string, u: AttestedUnit, f: AttestationFacts): boolean {
  if (!req.AllowAuthors && u.authors.includes(userId)) return false;
  const user = f.users.find((x) => x.UserID === userId);
  if (!user) return false;
  const groups = f.groups.filter((g) => g.MemberUserIDs.includes(userId));
  const fromUsers = req.FromUserIDs ?? [];
  const fromGroups = req.FromGroupIDs ?? [];
  if (fromUsers.length || fromGroups.length)
    return (
      fromUsers.some((x) => x === userId || x === user.Slug) ||
      groups.some((g) => fromGroups.includes(g.GroupID) || fromGroups.includes(g.Slug))
    );
  return allows(
    { OrganizationID: user.OrganizationID, UserID: userId, Role: user.Role, GroupIDs: groups.map((g) => g.GroupID) },
    f.space,
    'Approve',
  );
}

/**
 * A requirement over the revisions it reads: each needs Count distinct eligible users with a current
 * Pass covering it, and no current Fail from an eligible user (unless IgnoreFail). The first revision
 * short of it is named, as the spec's refusals do.
 */
export function evaluateAttestationRequirement(
  req: AttestationPrerequisite,
  units: AttestedUnit[],
  f: AttestationFacts,
): { ok: boolean; message: string } {
  const type = req.Type ?? 'Approval';
  const count = req.Count ?? 1;
  const head = `requires ${req.Name}: ${count} ${type} attestation(s) from eligible attesters who did not write the change`;
  for (const u of [...units].sort((a, b) => (a.slug < b.slug ? -1 : 1))) {
    const counting = f.attestations.filter(
      (a) => a.Type === type && covers(a, u) && current(a, f.now, req.MaxAge) && eligible(req, a.UserID, u, f),
    );
    const rejection = req.IgnoreFail ? undefined : counting.find((a) => a.Result === 'Fail');
    if (rejection) {
      const by = f.users.find((x) => x.UserID === rejection.UserID)?.Slug ?? rejection.UserID;
      return {
        ok: false,
        message: `${head}; ${u.slug} revision ${u.revision} was rejected by ${by}${rejection.Note ? ` (${rejection.Note})` : ''}`,
      };
    }
    const have = new Set(counting.filter((a) => a.Result === 'Pass').map((a) => a.UserID)).size;
    if (have < count)
      return { ok: false, message: `${head}; ${u.slug} revision ${u.revision} has ${have} of ${count}` };
  }
  return { ok: true, message: `${units.length} revision(s) have ${count} ${type} attestation(s) each` };
}

/** Why each attestation of a requirement's type counts for a revision or not: counted, rejecting, or excluded and why. */
export function explainAttestationRequirement(
  req: AttestationPrerequisite,
  units: AttestedUnit[],
  f: AttestationFacts,
): {
  Type: string;
  Count: number;
  Units: {
    Unit: string;
    RevisionNum: number;
    Counted: string[];
    Rejected: string[];
    Excluded: { User: string; Why: string }[];
  }[];
} {
  const type = req.Type ?? 'Approval';
  const name = (id: string) => f.users.find((x) => x.UserID === id)?.Slug ?? id;
  const age = req.MaxAge ? parseDuration(req.MaxAge) : undefined;
  return {
    Type: type,
    Count: req.Count ?? 1,
    Units: [...units]
      .sort((a, b) => (a.slug < b.slug ? -1 : 1))
      .map((u) => {
        const row = {
          Unit: u.slug,
          RevisionNum: u.revision,
          Counted: [] as string[],
          Rejected: [] as string[],
          Excluded: [] as { User: string; Why: string }[],
        };
        for (const a of f.attestations.filter(
          (x) => x.Type === type && !x.RevokedAttestationID && x.Revisions.some((r) => r.UnitID === u.unitId),
        )) {
          const who = name(a.UserID);
          if (!covers(a, u)) row.Excluded.push({ User: who, Why: 'attests other content of this Unit' });
          else if (a.RevokedBy) row.Excluded.push({ User: who, Why: `revoked by ${name(a.RevokedBy)}` });
          else if (a.ExpiresAt && Date.parse(a.ExpiresAt) <= f.now.getTime())
            row.Excluded.push({ User: who, Why: `expired at ${a.ExpiresAt}` });
          else if (age !== undefined && Date.parse(a.CreatedAt) + age <= f.now.getTime())
            row.Excluded.push({ User: who, Why: `older than MaxAge ${req.MaxAge}` });
          else if (!req.AllowAuthors && u.authors.includes(a.UserID))
            row.Excluded.push({ User: who, Why: 'wrote the change' });
          else if (!eligible(req, a.UserID, u, f))
            row.Excluded.push({
              User: who,
              Why: 'not eligible (not among FromUserIDs/FromGroupIDs, or no Approve permission in the Space)',
            });
          else {
            // A person counts once, however many times they attested (as the gate counts them).
            const into = a.Result === 'Pass' ? row.Counted : row.Rejected;
            if (into.includes(who))
              row.Excluded.push({
                User: who,
                Why: `${a.Result === 'Pass' ? 'approved' : 'rejected'} already: a person counts once`,
              });
            else into.push(who);
          }
        }
        return row;
      }),
  };
}
