#!/usr/bin/env node
// `cub`: runs the TypeScript CLI through tsx's loader, so no build step stands between a clone and a working command.
import { register } from 'tsx/esm/api';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2));
