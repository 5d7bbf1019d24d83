import type { ToolchainType } from './documents.ts';
import { findPlaceholderValues } from './functions.ts';
import { loadYaml } from './load.ts';

/**
 * What would make data unfit to release, by check name. Today one check: placeholders a base leaves
 * for variants to fill (`confighubplaceholder`, 999999999) must be filled before a Release bundles them.
 * Reads the values the write already loaded.
 */
export function validationErrors(toolchain: ToolchainType, data: string): Record<string, string> {
  if (toolchain !== 'Kubernetes/YAML' || !data.trim()) return {};
  const left = findPlaceholderValues(loadYaml(data) as Record<string, unknown>[]);
  if (!left.length) return {};
  return { placeholders: `placeholders left at ${left.map((p) => `${p.Resource} ${p.Path}`).join(', ')}` };
}
