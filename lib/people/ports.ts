import type { Deps } from '../ports/deps.ts';
import type { Store } from '../ports/store.ts';

/** The narrow port users, groups and tokens do their I/O through: nothing of Spaces, Units or ChangeOrders. */
export type UserStore = Pick<
  Store,
  | 'getUser'
  | 'idInOrg'
  | 'getGroup'
  | 'transact'
  | 'listUsers'
  | 'tokensOfUser'
  | 'listGroups'
  | 'tokensOf'
  | 'tokenPage'
  | 'tokenById'
>;

/** What those operations are given: the narrow store, the bus, the clock and ids. */
export type PeopleDeps = Deps<UserStore>;
