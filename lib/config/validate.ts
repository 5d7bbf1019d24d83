import type { ToolchainType } from './documents.ts';
import { parseYaml } from './documents.ts';
import { runFunction } from './functions.ts';

/**
 * What would make data unfit to release, by check name. Today one check: placeholders a base leaves
 * for variants to fill (`confighubplaceholder`, 999999999) must be filled before a Release bundles them.
 */
export function validationErrors(toolchain: ToolchainType, data: string): Record<string, string> {
  if (toolchain !== 'Kubernetes/YAML' || !data.trim()) return {};
  parseYaml(data);
  const left = runFunction('get-placeholders', [], data).output as { Resource: string; Path: string }[];
  if (!left.length) return {};
  return { placeholders: `placeholders left at ${left.map((p) => `${p.Resource} ${p.Path}`).join(', ')}` };
}
