import { Entity } from 'electrodb';

/**
 * The ElectroDB model of Baton's one table: what every entity's definition is made of. Attribute names
 * are the API's PascalCase field names, so an item read is already the entity the API returns (minus
 * ElectroDB's own key fields).
 */
export const service = 'baton';
export const str = { type: 'string' } as const;
export const reqStr = { type: 'string', required: true } as const;
export const num = { type: 'number' } as const;
export const any = { type: 'any' } as const;
export const reqNum = { type: 'number', required: true } as const;
export const reqAny = { type: 'any', required: true } as const;
export const key = <const C extends readonly string[]>(composite: C, field: string) => ({
  field,
  composite: [...composite] as [...C],
  casing: 'none' as const,
});

export const common = {
  OrganizationID: reqStr,
  Slug: reqStr,
  DisplayName: str,
  Labels: { type: 'any', required: true },
  Annotations: { type: 'any', required: true },
  CreatedAt: reqStr,
  UpdatedAt: reqStr,
  Version: { type: 'number', required: true },
} as const;

export const primary = <const P extends readonly string[], const S extends readonly string[]>(pk: P, sk: S) => ({
  pk: key(pk, 'pk'),
  sk: key(sk, 'sk'),
});

/** What every Space-resident item carries. */
export const inSpace = { ...common, SpaceID: reqStr } as const;

/** A Space-resident kind of one shape: keyed by its Space and its ID, with these attributes of its own. */
export const spaceEntity = (entity: string, idField: string, extra: Record<string, unknown>) =>
  new Entity({
    model: { entity, version: '1', service },
    attributes: { ...inSpace, [idField]: reqStr, ...extra } as typeof inSpace & Record<string, typeof str>,
    indexes: { primary: primary(['SpaceID'], [idField]) },
  });
