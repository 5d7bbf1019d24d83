/** Domain errors: each maps to one HTTP status in lib/api, and carries a message a person can act on. */
export abstract class BatonError extends Error {
  abstract readonly status: number;
  abstract readonly code: string;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The request is malformed or names something invalid (400). */
export class Invalid extends BatonError {
  readonly status = 400;
  readonly code = 'Invalid';
}

/** No or bad credentials (401). */
export class Unauthorized extends BatonError {
  readonly status = 401;
  readonly code = 'Unauthorized';
}

/** Authenticated, but not allowed (403). */
export class Forbidden extends BatonError {
  readonly status = 403;
  readonly code = 'Forbidden';
}

/** The entity does not exist in the caller's organization (404). */
export class NotFound extends BatonError {
  readonly status = 404;
  readonly code = 'NotFound';
}

/** The write raced another, or contradicts current state (409). */
export class Conflict extends BatonError {
  readonly status = 409;
  readonly code = 'Conflict';
}

/** The payload is larger than an item can hold (413). */
export class TooLarge extends BatonError {
  readonly status = 413;
  readonly code = 'PayloadTooLarge';
}

/** The request is well formed but cannot be carried out in the current state (422). */
export class Unprocessable extends BatonError {
  readonly status = 422;
  readonly code = 'Unprocessable';
}
