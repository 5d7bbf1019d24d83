import type { Deps } from '../ports/deps.ts';
import type { Store } from '../ports/store.ts';
import type { PublishStore } from '../releases/ports.ts';

/**
 * The narrow port the ChangeOrder operations do their I/O through: the releases port below it (and so the
 * variants' and the people's), and what ChangeOrders, their progress, holds, attestations and jobs need.
 */
export type ChangeOrderStore = PublishStore &
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
    | 'idInOrg'
    | 'getHold'
    | 'listWindows'
    | 'changeOrderPage'
    | 'listNotifications'
    | 'notificationsWatchingBlocked'
    | 'eventProcessed'
    | 'markEventProcessed'
    | 'changeOrdersInFlight'
    | 'getNotification'
    | 'deliveriesOf'
    | 'getWindow'
    | 'slugPage'
    | 'getMany'
    | 'jobPartDone'
    | 'jobParts'
    | 'jobPlan'
    | 'updateInSpace'
    | 'createInSpace'
  >;

/** What a ChangeOrder operation is given: the narrow store, the bus, the clock and ids. */
export type ChangeDeps = Deps<ChangeOrderStore>;
