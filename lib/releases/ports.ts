import type { Deps } from '../ports/deps.ts';
import type { Store } from '../ports/store.ts';
import type { UnitStore } from '../variants/ports.ts';

/** The narrow port bundling, publishing and live status do their I/O through: Units and their revisions, Releases and their counters. */
export type PublishStore = UnitStore & Pick<Store, 'releaseCounter' | 'releasePage' | 'spacesReleasingTo'>;

/** What those operations are given: the narrow store, the bus, the clock and ids. */
export type ReleaseDeps = Deps<PublishStore>;
