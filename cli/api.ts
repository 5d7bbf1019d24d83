/**
 * What the API answers, as cub reads it: the types of the API's own answer schemas (lib/api/answers.ts, the
 * one contract the server is checked against and the OpenAPI document carries) and lib/model's entities.
 * Types only; nothing of lib is bundled.
 */
export type {
  ApproveAnswer,
  ChangeOrderPromotion,
  DemoteAnswer,
  InvokeAnswer,
  JobAccepted,
  JobAnswer,
  PathChange as Change,
  PromotedUnit,
  PublishAnswer,
  SpaceDeletion,
  SpacePromotion,
  UnitResult,
  UploadAnswer,
  VariantAnswer,
} from '../lib/api/answers.ts';
