import type { Deps } from '../ports/deps.ts';
import type { Store } from '../ports/store.ts';

/** The narrow port revision writing, merging, cloning and lookups do their I/O through: Units, their revisions, marks and Links, and one transactional write. */
export type UnitStore = Pick<
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
>;

/** What those operations are given: the narrow store, the bus, the clock and ids. */
export type UnitDeps = Deps<UnitStore>;
