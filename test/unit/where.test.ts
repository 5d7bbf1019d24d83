import { describe, expect, it } from 'vitest';
import { matches, parseWhere, WhereError } from '../../lib/where/index.ts';

const space = {
  SpaceID: '11111111-2222-3333-4444-555555555555',
  Slug: 'acme-staging-euw1',
  DisplayName: 'Acme Staging',
  ComponentID: '99999999-2222-3333-4444-555555555555',
  Version: 3,
  CreatedAt: '2026-11-30T10:00:00.000Z',
  Labels: { Stage: 'Staging', Region: 'eu-west1', 'app.kubernetes.io/name': 'acme' },
  Annotations: {},
  Component: { Slug: 'acme' },
};
const unit = {
  UnitID: 'aaaaaaaa-2222-3333-4444-555555555555',
  Slug: 'deployment',
  HeadRevisionNum: 5,
  UpstreamRevisionNum: 3,
  ProtectedPaths: ['spec.replicas', 'metadata.name'],
  Labels: {},
  Annotations: {},
  UpstreamUnit: { HeadRevisionNum: 4 },
};

describe('where: every operator matches as specified', () => {
  const spaceCases: [string, boolean][] = [
    ["Slug = 'acme-staging-euw1'", true],
    ["Slug != 'acme-staging-euw1'", false],
    ["Slug < 'b'", true],
    ["Slug >= 'b'", false],
    ["Slug LIKE 'acme-%'", true],
    ["Slug LIKE 'acme-_taging%'", true],
    ["Slug NOT LIKE 'acme-%'", false],
    ["Slug ~~ '%euw1'", true],
    ["Slug !~~ '%euw1'", false],
    ["Slug ILIKE 'ACME-%'", true],
    ["Slug LIKE 'ACME-%'", false],
    ["Slug ~ '^acme-[a-z]+-euw[0-9]$'", true],
    ["Slug ~* '^ACME'", true],
    ["Slug !~ 'prod'", true],
    ["Slug !~* 'STAGING'", false],
    ["Slug IN ('a', 'acme-staging-euw1')", true],
    ["Slug NOT IN ('a', 'acme-staging-euw1')", false],
    ["Labels.Stage = 'Staging'", true],
    ["Labels.Stage IN ('Development', 'Staging')", true],
    ["Labels.app.kubernetes.io/name = 'acme'", true],
    ['Labels.Missing IS NULL', true],
    ['Labels.Stage IS NOT NULL', true],
    ["Labels.Missing = 'x'", false],
    ['UpstreamSpaceID IS NULL', true],
    ["SpaceID = '11111111-2222-3333-4444-555555555555'", true],
    ["SpaceID = '11111111-2222-3333-4444-555555555555' AND Labels.Stage = 'Production'", false],
    ["ComponentID IN ('99999999-2222-3333-4444-555555555555')", true],
    ['Version = 3', true],
    ['Version > 3', false],
    ['Version <= 3 AND Version >= 3', true],
    ['Version IN (1, 2, 3)', true],
    ["CreatedAt > '2026-11-01'", true],
    ["CreatedAt < '2026-11-01T00:00:00Z'", false],
    ["Component.Slug = 'acme'", true],
    ['LEN(Labels) = 3', true],
    ["Slug = 'acme-staging-euw1' IS TRUE", true],
    ["Slug = 'acme-staging-euw1' IS NOT TRUE", false],
    ["Slug = 'x' IS FALSE", true],
  ];
  it.each(spaceCases)('Space: %s → %s', (q, want) => {
    expect(matches(parseWhere(q, 'Space'), space)).toBe(want);
  });

  const unitCases: [string, boolean][] = [
    ["ProtectedPaths ? 'spec.replicas'", true],
    ["ProtectedPaths ? 'spec.template'", false],
    ['LEN(ProtectedPaths) > 1', true],
    ['LEN(ProtectedPaths) = 0', false],
    ['UpstreamRevisionNum < UpstreamUnit.HeadRevisionNum', true],
    ['HeadRevisionNum < UpstreamUnit.HeadRevisionNum', false],
  ];
  it.each(unitCases)('Unit: %s → %s', (q, want) => {
    expect(matches(parseWhere(q, 'Unit'), unit)).toBe(want);
  });

  it('joins terms only with AND, case-insensitively', () => {
    expect(matches(parseWhere("Slug like 'acme%' and Version in (3)", 'Space'), space)).toBe(true);
  });

  it('reads doubled quotes inside a string as one quote', () => {
    expect(matches(parseWhere("DisplayName = 'it''s'", 'Space'), { ...space, DisplayName: "it's" })).toBe(true);
  });
});

describe('where: bad queries are refused naming what and where', () => {
  const cases: [string, string, RegExp][] = [
    ['Space', "Nope = 'x'", /unknown attribute 'Nope' for Space at position 1/],
    ['Space', "Component.Nope = 'x'", /unknown attribute 'Nope' of Component at position 11/],
    ['Space', "Version = '3'", /Version needs an integer literal, found '3' at position 11/],
    ['Space', 'Slug = 3', /Slug needs a string literal/],
    ['Space', "SpaceID = 'not-a-uuid'", /'not-a-uuid' is not a UUID at position 11/],
    ['Space', "CreatedAt > 'yesterday-ish'", /is not a time/],
    ['Space', "Slug ~ '('", /bad regular expression/],
    ['Space', "Slug = 'x' OR Slug = 'y'", /OR is not supported.* at position 12/],
    ['Space', "Slug = 'x' Slug = 'y'", /expected AND or end of query, found 'Slug' at position 12/],
    ['Space', "Slug = 'x", /unterminated string literal at position 8/],
    ['Space', 'Slug', /expected an operator, found end of query at position 5/],
    ['Space', '', /empty query/],
    ['Space', 'Version > 12345678901', /more than 10 digits/],
    ['Space', `Slug = '${'x'.repeat(256)}'`, /string literal is 256 characters, more than 255/],
    ['Space', `${'A'.repeat(42)} = 'x'`, /longer than 41 characters/],
    ['Space', `Labels.${'k'.repeat(129)} = 'x'`, /key is 129 characters, more than 128/],
    ['Space', `Slug IN (${Array.from({ length: 800 }, () => "'abcd'").join(',')})`, /more than 4096/],
    ['Space', "Version LIKE 'x'", /operator LIKE does not apply to Version \(int\)/],
    ['Space', "Labels ? 'x'", /operator \? does not apply to Labels \(map\)/],
    ['Space', 'LEN(Slug) > 1', /LEN\(\) needs an array or map attribute/],
    ['Space', "Slug = 'x' $", /unexpected character '\$' at position 12/],
    ['Unit', "ProtectedPaths = 'x'", /operator = does not apply to ProtectedPaths \(array\)/],
    ['Unit', 'HeadRevisionNum = Slug', /cannot compare int with string attribute/],
  ];
  it.each(cases)('%s: %s', (entity, q, msg) => {
    let err: unknown;
    try {
      parseWhere(q, entity);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(WhereError);
    expect((err as Error).message).toMatch(msg);
    expect((err as WhereError).code).toBe('Invalid');
  });
});
