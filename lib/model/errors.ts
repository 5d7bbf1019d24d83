/** Domain errors: each carries a code and a message a person can act on; lib/api maps each code to an HTTP status. */
export abstract class BatonError extends Error {
  abstract readonly code: ErrorCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The codes a domain error answers with, one per kind of failure. */
export const ErrorCode = {
  /** The request is malformed or names something invalid. */
  Invalid: 'Invalid',
  /** No or bad credentials. */
  Unauthorized: 'Unauthorized',
  /** Authenticated, but not allowed. */
  Forbidden: 'Forbidden',
  /** The entity does not exist in the caller's organization. */
  NotFound: 'NotFound',
  /** The write raced another, or contradicts current state. */
  Conflict: 'Conflict',
  /** A prerequisite of the workflow does not hold, so the change may not move. */
  GateRefused: 'GateRefused',
  /** The payload is larger than an item can hold. */
  PayloadTooLarge: 'PayloadTooLarge',
  /** Well formed, but cannot be carried out in the current state. */
  Unprocessable: 'Unprocessable',
  /** The database cannot be reached or is throttling: try again shortly. */
  Unavailable: 'Unavailable',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The request is malformed or names something invalid. */
export class Invalid extends BatonError {
  readonly code = ErrorCode.Invalid;
}

/** No or bad credentials. */
export class Unauthorized extends BatonError {
  readonly code = ErrorCode.Unauthorized;
}

/** Authenticated, but not allowed. */
export class Forbidden extends BatonError {
  readonly code = ErrorCode.Forbidden;
}

/** The entity does not exist in the caller's organization. */
export class NotFound extends BatonError {
  readonly code = ErrorCode.NotFound;
}

/** The write raced another, or contradicts current state. */
export class Conflict extends BatonError {
  readonly code = ErrorCode.Conflict;
}

/** A transaction refused because one of its items' conditions failed (or it raced another write): `at` is that item's place in the list written. */
export class WriteRefused extends Conflict {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(message);
  }
}

/**
 * A gate refused: the prerequisites of a Stage (or of a release in it) do not hold. `details` is what
 * the operation had decided when it refused (the gates evaluated, the Spaces held back), for the reply.
 */
export class GateRefused extends BatonError {
  readonly code = ErrorCode.GateRefused;
  constructor(
    message: string,
    readonly details?: object,
  ) {
    super(message);
  }
}

/** The payload is larger than an item can hold. */
export class TooLarge extends BatonError {
  readonly code = ErrorCode.PayloadTooLarge;
}

/** The database cannot be reached or is throttling: nothing was decided, try again shortly. */
export class Unavailable extends BatonError {
  readonly code = ErrorCode.Unavailable;
}

/** Well formed, but cannot be carried out in the current state. */
export class Unprocessable extends BatonError {
  readonly code = ErrorCode.Unprocessable;
}

/** Refuses an update that carries a Version other than the one stored: the writer read a stale copy. */
export function expectVersion(what: string, have: number, sent: number | undefined): void {
  if (sent !== undefined && sent !== have)
    throw new Conflict(`${what} is at Version ${have}, not ${sent}; read it again and retry`);
}
