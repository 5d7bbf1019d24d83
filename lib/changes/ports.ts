import type { Deps } from '../ports/deps.ts';
import type { Store } from '../ports/store.ts';
import type { UnitStore } from '../variants/ports.ts';

/**
 * The narrow port the ChangeOrder operations do their I/O through: the reads and the one transactional
 * write they need, and nothing else of the store (no organizations, tokens or deletes).
 */
export type ChangeOrderStore = UnitStore &
  Pick<
    Store,
    | 'listSpaces'
    | 'listComponents'
    | 'linksInto'
    | 'changeOrdersOf'
    | 'changeOrdersReaching'
    | 'progressAt'
    | 'progressOf'
    | 'marksOfTag'
    | 'listUsers'
    | 'listGroups'
    | 'listRevisions'
    | 'revisionsBetween'
    | 'getRevisions'
    | 'revisionsAt'
    | 'transactGroups'
    | 'releasePage'
    | 'releasesAtChangeOrder'
    | 'attestationsNaming'
    | 'attestationById'
    | 'listHolds'
    | 'getJob'
  >;

/** What a ChangeOrder operation is given: the narrow store, the bus, the clock and ids. */
export type ChangeDeps = Deps<ChangeOrderStore>;
