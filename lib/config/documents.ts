import { isMap, isSeq, parseAllDocuments, type Document } from 'yaml';
import type { ToolchainType } from '../model/entities.ts';
import { Invalid } from '../model/errors.ts';
import { loadYaml } from './load.ts';

/** The toolchain types a Unit may have. */
export { TOOLCHAIN_TYPES, type ToolchainType } from '../model/entities.ts';

/** Parses multi-document YAML, keeping comments and key order; a syntax error is a 400 naming the line. */
export function parseYaml(text: string): Document.Parsed[] {
  const docs = parseAllDocuments(text, { keepSourceTokens: false });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const d of list) {
    const err = d.errors[0];
    if (err) {
      const line = err.linePos?.[0]?.line;
      throw new Invalid(`Data is not valid YAML${line ? ` (line ${line})` : ''}: ${err.message.split('\n')[0]}`);
    }
  }
  // A trailing `---` yields an empty document; it holds no resource.
  return list.filter((d) => d.contents !== null);
}

/** Serializes documents back to one multi-document YAML text. */
export function stringifyYaml(docs: Document[]): string {
  return docs
    .map((d, i) => {
      const text = d.toString({ lineWidth: 0 });
      // A document parsed after a `---` prints its own marker; add one only where it does not.
      return i === 0 || text.startsWith('---') ? text : `---\n${text}`;
    })
    .join('');
}

/** Checks data is well formed for its toolchain type, so nothing unparseable is ever stored. */
export function validateData(toolchain: ToolchainType, data: string): void {
  switch (toolchain) {
    case 'Kubernetes/YAML': {
      const docs = loadYaml(data);
      docs.forEach((d, i) => {
        if (!d || typeof d !== 'object' || Array.isArray(d))
          throw new Invalid(`Data document ${i + 1} is not a Kubernetes resource (a YAML mapping)`);
        const js = d as Record<string, unknown>;
        if (typeof js.kind !== 'string' || !js.kind) throw new Invalid(`Data document ${i + 1} has no 'kind'`);
        const meta = js.metadata as Record<string, unknown> | undefined;
        if (!meta || typeof meta.name !== 'string' || !meta.name)
          throw new Invalid(`Data document ${i + 1} (${js.kind}) has no 'metadata.name'`);
      });
      return;
    }
    case 'AppConfig/YAML':
    case 'ConfigHub/YAML':
      loadYaml(data);
      return;
    case 'AppConfig/JSON':
      try {
        JSON.parse(data);
      } catch (e) {
        throw new Invalid(`Data is not valid JSON: ${(e as Error).message}`);
      }
      return;
    case 'AppConfig/Env':
    case 'AppConfig/Properties':
      data.split('\n').forEach((line, i) => {
        const t = line.trim();
        if (!t || t.startsWith('#') || t.startsWith('!')) return;
        if (!/^[^=:\s][^=:]*[=:]/.test(t)) throw new Invalid(`Data line ${i + 1} is not a key=value pair`);
      });
      return;
    case 'AppConfig/Text':
      return;
  }
}

/** A resource's identity inside a unit: `Kind/name`, as mutation paths and merges name it. */
export function resourceKey(js: Record<string, unknown>): string {
  const meta = (js.metadata ?? {}) as Record<string, unknown>;
  return `${String(js.kind ?? '')}/${String(meta.name ?? '')}`;
}

export { isMap, isSeq };
