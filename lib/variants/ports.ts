import type { Deps } from '../ports/deps.ts';
import type { Store } from '../ports/store.ts';
import type { UserStore } from '../people/ports.ts';

/**
 * The narrow port of lib/variants (Spaces, Components, Units, revisions, merges, clones, Links, Targets, the
 * Space-resident kinds, lookups): what they read and write, over the people port below it.
 */
export type UnitStore = UserStore &
  Pick<
    Store,
    | 'spaceIdBySlug'
    | 'componentIdBySlug'
    | 'idInSpace'
    | 'getSpace'
    | 'spaceAndSlug'
    | 'getComponent'
    | 'getUnit'
    | 'listUnits'
    | 'updateUnit'
    | 'getRevision'
    | 'getRevisions'
    | 'marksOfUnit'
    | 'marksAt'
    | 'getInSpace'
    | 'listInSpace'
    | 'transact'
    | 'linksInto'
    | 'deleteUnit'
    | 'deleteSpace'
    | 'targetsDeploying'
    | 'updateInSpace'
    | 'closeChangeSet'
    | 'createSpace'
    | 'updateSpace'
    | 'revisionPage'
    | 'putMark'
    | 'deleteInSpace'
    | 'createInSpace'
    | 'createComponent'
    | 'listRevisions'
  >;

/** What those operations are given: the narrow store, the bus, the clock and ids. */
export type UnitDeps = Deps<UnitStore>;
