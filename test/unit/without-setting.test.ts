import { describe, expect, it } from 'vitest';
import { withoutSetting } from '../../lib/store/transact.ts';

/** An update as ElectroDB builds one for a Link's cursor, guarded by its Version. */
const update = (expr: string) => ({
  UpdateExpression: expr,
  ConditionExpression: 'attribute_exists(#pk) AND attribute_exists(#sk) AND #Version = :Version0',
  ExpressionAttributeNames: {
    '#pk': 'pk',
    '#sk': 'sk',
    '#Version': 'Version',
    '#Cursor': 'UpstreamLastMergedRevisionNum',
    '#SpaceID': 'SpaceID',
    '#LinkID': 'LinkID',
    '#__edb_e__': '__edb_e__',
    '#Gone': 'DisplayName',
  },
  ExpressionAttributeValues: {
    ':Version0': 1,
    ':Version_u0': 2,
    ':Cursor_u0': 3,
    ':SpaceID_u0': 's1',
    ':LinkID_u0': 'l1',
    ':__edb_e___u0': 'link',
  } as Record<string, unknown>,
});
const keys = new Set(['SpaceID', 'LinkID', '__edb_e__']);

describe('an update that no longer sets what it names', () => {
  it('drops those assignments and their placeholders, keeping what the condition and the rest still use', () => {
    const u = update(
      'SET #Cursor = :Cursor_u0, #Version = :Version_u0, #SpaceID = :SpaceID_u0, #LinkID = :LinkID_u0, #__edb_e__ = :__edb_e___u0 REMOVE #Gone',
    );
    withoutSetting(u, keys);
    expect(u.UpdateExpression).toBe('SET #Cursor = :Cursor_u0, #Version = :Version_u0 REMOVE #Gone');
    expect(Object.keys(u.ExpressionAttributeNames).sort()).toEqual(['#Cursor', '#Gone', '#Version', '#pk', '#sk']);
    expect(Object.keys(u.ExpressionAttributeValues).sort()).toEqual([':Cursor_u0', ':Version0', ':Version_u0']);
  });

  it('leaves an update it cannot read as plain assignments, or one it would leave setting nothing, as it is', () => {
    for (const expr of [
      'SET #Cursor = if_not_exists(#Cursor, :Cursor_u0), #SpaceID = :SpaceID_u0',
      'SET #Cursor = :Cursor_u0, #SpaceID = :SpaceID_u0 ADD #Version :Version_u0',
      'SET #SpaceID = :SpaceID_u0, #LinkID = :LinkID_u0',
      'REMOVE #Gone',
    ]) {
      const u = update(expr);
      const before = structuredClone(u);
      withoutSetting(u, keys);
      expect(u).toEqual(before);
    }
  });
});
