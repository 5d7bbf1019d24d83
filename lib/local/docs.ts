/** `npm run docs` (with cli/reference.ts): writes docs/reference/events.md and openapi.json from the code they describe. */
import { writeFileSync } from 'node:fs';
import { eventsMarkdown } from '../events/docs.ts';
import { PUBLIC_ROUTES, ROUTES } from '../api/routes/index.ts';
import { openApiDocument } from '../api/openapi.ts';

const root = new URL('../../docs/reference/', import.meta.url);
writeFileSync(new URL('events.md', root), eventsMarkdown());
writeFileSync(new URL('openapi.json', root), JSON.stringify(openApiDocument(ROUTES, PUBLIC_ROUTES), null, 2) + '\n');
console.log('wrote docs/reference/events.md and docs/reference/openapi.json');
