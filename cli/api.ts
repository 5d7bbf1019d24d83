/**
 * What the API answers, as cub reads it: the entities of lib/model, and the shapes of the operations'
 * answers (only the fields cub reads). Types only; nothing of lib is bundled.
 */
import type { MergeConflict, Release, Space, Unit } from '../lib/model/entities.ts';

/** A path one revision changes. */
export interface Change {
  Resource: string;
  Path: string;
  Op: string;
  Value?: unknown;
}

/** What happened to one Unit in an upgrade, clone or promotion. */
export interface UnitResult {
  UnitSlug: string;
  Action: string;
  Reason?: string;
  RevisionNums?: number[];
  Changes?: Change[];
  Conflicts?: MergeConflict[];
  Error?: { Message: string };
}

/** `POST /promote` with a ChangeOrder. */
export interface ChangeOrderPromotion {
  Message?: string;
  DryRun?: boolean;
  Stage?: string;
  Landed: number;
  Total: number;
  Forced?: boolean;
  Spaces: { SpaceSlug: string; Action: string; Error?: string; Units: UnitResult[] }[];
}

/** `POST /promote` of a Space, and `POST /variant`. */
export interface VariantAnswer {
  Space: Space;
  Units: UnitResult[];
}

/** `POST /variant/upload`. */
export interface UploadAnswer {
  Space: Space;
  Units: Unit[];
}

/** `POST /space/{space}/function/invoke`. */
export interface InvokeAnswer {
  Results: {
    UnitSlug: string;
    Changed?: boolean;
    RevisionNum?: number;
    Output?: unknown;
    Changes?: Change[];
    Error?: { Message: string };
  }[];
}

/** `POST /space/{space}/release`. */
export interface PublishAnswer {
  Message?: string;
  DryRun?: boolean;
  UnitCount: number;
  Digest: string;
  Release: Release;
  Units: { Slug: string; RevisionNum: number }[];
}

/** `DELETE /space/{space}`. */
export interface SpaceDeletion {
  DeletedUnits?: string[];
  RemovedLinks?: { Slug: string; SpaceID: string }[];
}

/** `POST /attest` and `POST /space/{space}/attestation`. */
export interface ApproveAnswer {
  DryRun: boolean;
  Type: string;
  Result: 'Pass' | 'Fail';
  Spaces: {
    SpaceSlug: string;
    Action: 'Attest' | 'Skipped';
    Reason?: string;
    AttestationID?: string;
    Warning?: string;
    Units: { UnitSlug: string; RevisionNum?: number; Skipped?: string }[];
  }[];
}

/** `POST /demote`. */
export interface DemoteAnswer {
  SpaceSlug: string;
  DryRun: boolean;
  Restored: boolean;
  Units: {
    UnitSlug: string;
    Action: string;
    Reason?: string;
    RestoredRevisionNum?: number;
    RevisionNum?: number;
    Dropped?: { RevisionNum: number; UserID: string; Description?: string }[];
    Error?: string;
  }[];
}
