/**
 * `npm run admin -- create-organization <name> --table <table>`: gives a deployed stack (or any table)
 * its first organization and admin token, printed once — only its hash is stored. Uses the AWS
 * credentials and region of the environment (AWS_PROFILE, AWS_REGION), or AWS_ENDPOINT_URL / --endpoint
 * for DynamoDB Local and LocalStack.
 */
import { Command, CommanderError } from 'commander';
import { Invalid } from '../model/errors.ts';
import { BatonError } from '../model/errors.ts';
import { systemDeps } from '../ports/deps.ts';
import { dynamoStore } from '../store/store.ts';
import { dynamoClient } from '../store/table.ts';
import { SLUG_PATTERN } from '../api/schemas.ts';
import { createOrganization } from './bootstrap.ts';
import { EventBridgeBus } from '../events/bus.ts';
import { drainPending } from '../events/outbox.ts';

const program = new Command('admin')
  .description('Operate a Baton table directly (needs DynamoDB access to it)')
  .exitOverride();
program
  .command('create-organization')
  .description('Create an organization with one admin user; print the admin token (shown once)')
  .argument('<name>', 'the organization slug')
  .requiredOption('--table <table>', 'the DynamoDB table (the stack output TableName, e.g. baton-prod)')
  .option('--admin <user>', 'the admin user slug', 'admin')
  .option('--endpoint <url>', 'a DynamoDB endpoint (DynamoDB Local, LocalStack); default AWS_ENDPOINT_URL or AWS')
  .option('-o, --output <format>', 'text or json', 'text')
  .action(async (name: string, o: { table: string; admin: string; endpoint?: string; output: string }) => {
    if (!SLUG_PATTERN.test(name) || name.length > 128)
      throw new Invalid(
        `'${name}' is not a slug: letters, digits, - and _, starting and ending with a letter or digit`,
      );
    if (!SLUG_PATTERN.test(o.admin)) throw new Invalid(`--admin '${o.admin}' is not a slug`);
    if (o.output !== 'text' && o.output !== 'json') throw new Invalid(`-o ${o.output}: text or json`);
    const store = dynamoStore(dynamoClient(o.endpoint ?? process.env.AWS_ENDPOINT_URL), o.table);
    const { caller, token } = await createOrganization(
      systemDeps(store, { put: async () => undefined }),
      name,
      o.admin,
    );
    if (o.output === 'json')
      console.log(
        JSON.stringify({
          OrganizationID: caller.OrganizationID,
          Organization: name,
          UserID: caller.UserID,
          User: o.admin,
          Token: token,
        }),
      );
    else
      console.log(
        `Created organization '${name}' (${caller.OrganizationID}) with admin user '${o.admin}'.\nAdmin token (shown once; only its hash is stored):\n\n  ${token}\n\nUse it with: cub context set <name> --server <ApiUrl> --token <token>`,
      );
  });

program
  .command('publish-outbox')
  .description(
    'Publish the events still waiting in the outbox (the stream publisher gave up on them: see its dead-letter queue), oldest first',
  )
  .requiredOption('--table <table>', 'the DynamoDB table')
  .requiredOption('--bus <bus>', 'the EventBridge bus (the stack output BusName)')
  .option('--endpoint <url>', 'a DynamoDB and EventBridge endpoint (LocalStack); default AWS_ENDPOINT_URL or AWS')
  .action(async (o: { table: string; bus: string; endpoint?: string }) => {
    if (o.endpoint) process.env.AWS_ENDPOINT_URL = o.endpoint;
    const store = dynamoStore(dynamoClient(o.endpoint ?? process.env.AWS_ENDPOINT_URL), o.table);
    const n = await drainPending(store, new EventBridgeBus(o.bus));
    console.log(n ? `Published ${n} event(s) from the outbox to ${o.bus}` : 'The outbox is empty: nothing to publish');
  });

program.parseAsync(process.argv).catch((e: unknown) => {
  if (e instanceof CommanderError) process.exit(e.exitCode);
  const msg = e instanceof BatonError ? e.message : e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  console.error(`Failed: ${msg}`);
  process.exit(1);
});
