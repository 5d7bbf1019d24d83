const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Whether a reference is an ID rather than a slug. */
export function isId(ref: string): boolean {
  return UUID.test(ref);
}
