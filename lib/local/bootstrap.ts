import { tokenHash } from '../api/auth.ts';
import type { Deps } from '../ports/deps.ts';
import type { Caller } from '../model/entities.ts';

/** Creates an organization with one admin user and returns the admin's bearer token (shown once; only its hash is kept). */
export async function createOrganization(
  deps: Deps,
  slug: string,
  adminSlug = 'admin',
): Promise<{ caller: Caller; token: string }> {
  const now = deps.now().toISOString();
  const caller: Caller = { OrganizationID: deps.newId(), UserID: deps.newId(), Role: 'Admin', GroupIDs: [] };
  const token = deps.newToken();
  await deps.store.createOrganization(
    { OrganizationID: caller.OrganizationID, Slug: slug, CreatedAt: now },
    {
      OrganizationID: caller.OrganizationID,
      UserID: caller.UserID,
      Slug: adminSlug,
      DisplayName: adminSlug,
      Role: 'Admin',
      CreatedAt: now,
      UpdatedAt: now,
      Version: 1,
    },
    {
      TokenHash: tokenHash(token),
      TokenID: deps.newId(),
      OrganizationID: caller.OrganizationID,
      UserID: caller.UserID,
      Description: 'the first admin token',
      CreatedAt: now,
      CreatedBy: caller.UserID,
      Version: 1,
    },
  );
  return { caller, token };
}
