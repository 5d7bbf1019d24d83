import { describe, expect, it } from 'vitest';
import {
  checkParameterValues,
  nameArguments,
  parseArguments,
  parseParameter,
  render,
  validateInvocation,
} from '../../lib/config/invocations.ts';
import { runFunction } from '../../lib/config/functions.ts';
import { applyTransform } from '../../lib/config/transform.ts';

const setImage = [
  {
    FunctionName: 'set-image-reference-by-uri',
    Arguments: [
      { ParameterName: 'repository-uri', Value: 'ghcr.io/acme/acme' },
      { ParameterName: 'image-reference', Value: '{{ .Params.tag }}', Evaluator: 'template' as const },
    ],
  },
];
const tag = [parseParameter('tag:string:true')];

describe('Invocations', () => {
  it('reads arguments as the spec writes them: --name=value, positional, template:', () => {
    expect(
      parseArguments('set-image-reference-by-uri', [
        '--repository-uri=ghcr.io/acme/acme',
        '--image-reference=template:{{ .Params.tag }}',
      ]),
    ).toEqual(setImage[0]!.Arguments);
    expect(parseArguments('set-image-reference-by-uri', ['ghcr.io/acme/acme', 'template:{{.Params.tag}}'])).toEqual([
      setImage[0]!.Arguments[0],
      { ParameterName: 'image-reference', Value: '{{.Params.tag}}', Evaluator: 'template' },
    ]);
    expect(nameArguments({ FunctionName: 'set-replicas', Arguments: [{ Value: '3' }] })).toEqual({
      FunctionName: 'set-replicas',
      Arguments: [{ ParameterName: 'replicas', Value: '3' }],
    });
    expect(parseParameter('tag:string:true')).toEqual({ ParameterName: 'tag', DataType: 'string', Required: true });
    expect(parseParameter('replicas:int')).toEqual({ ParameterName: 'replicas', DataType: 'int', Required: false });
    expect(() => parseParameter('tag:float:true')).toThrow(/must be <name>:<string\|int\|bool>/);
  });

  it('is refused when saved if the toolchain cannot run it', () => {
    expect(() => validateInvocation('Kubernetes/YAML', setImage, tag)).not.toThrow();
    expect(() => validateInvocation('AppConfig/Text', setImage, tag)).toThrow(
      'toolchain AppConfig/Text has no functions; an Invocation runs on Kubernetes/YAML',
    );
    expect(() => validateInvocation('Kubernetes/YAML', [{ FunctionName: 'set-imagez', Arguments: [] }], [])).toThrow(
      /unknown function 'set-imagez'/,
    );
    expect(() =>
      validateInvocation(
        'Kubernetes/YAML',
        [{ FunctionName: 'set-replicas', Arguments: [{ ParameterName: 'count', Value: '3' }] }],
        [],
      ),
    ).toThrow("set-replicas has no parameter 'count'; it takes <replicas>");
    expect(() => validateInvocation('Kubernetes/YAML', setImage, [])).toThrow(
      "argument image-reference uses parameter 'tag', which the Invocation does not declare (--parameter tag:string:true)",
    );
    expect(() =>
      validateInvocation(
        'Kubernetes/YAML',
        [{ FunctionName: 'set-replicas', Arguments: [{ ParameterName: 'replicas', Value: 'many' }] }],
        [],
      ),
    ).toThrow("set-replicas: <replicas> must be a non-negative integer, got 'many'");
    expect(() => validateInvocation('Kubernetes/YAML', [{ FunctionName: 'set-replicas', Arguments: [] }], [])).toThrow(
      'set-replicas needs <replicas>',
    );
    expect(() =>
      validateInvocation(
        'Kubernetes/YAML',
        [
          {
            FunctionName: 'set-replicas',
            Arguments: [{ ParameterName: 'replicas', Value: '{{ .Env.X }}', Evaluator: 'template' }],
          },
        ],
        [],
      ),
    ).toThrow(/a template must name a parameter/);
  });

  it('renders with a ChangeOrder’s values, which must be declared, given when required, and of their type', () => {
    expect(render(setImage[0]!.Arguments, { tag: ':v453' })).toEqual([
      '--repository-uri=ghcr.io/acme/acme',
      '--image-reference=:v453',
    ]);
    const out = runFunction(
      'set-image-reference-by-uri',
      render(setImage[0]!.Arguments, { tag: ':v453' }),
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: acme\nspec:\n  template:\n    spec:\n      containers:\n        - name: acme\n          image: ghcr.io/acme/acme:v452\n',
    );
    expect(out.data).toContain('image: ghcr.io/acme/acme:v453');
    expect(checkParameterValues(tag, { tag: ':v453' })).toEqual({ tag: ':v453' });
    expect(() => checkParameterValues(tag, {})).toThrow("parameter 'tag' is required: --param tag=<string>");
    expect(() => checkParameterValues(tag, { tag: ':v1', extra: 'x' })).toThrow(
      "the Invocation has no parameter 'extra'; it declares tag",
    );
    expect(() => checkParameterValues([parseParameter('n:int:true')], { n: 'three' })).toThrow(
      "parameter 'n' must be an integer, got 'three'",
    );
  });
});

describe('TransformPaths Links, resolved', () => {
  const registry =
    'configHub:\n  configSchema: registrybot.confighub.com/v1alpha4\n  configName: acme\nrepository: ghcr.io/acme/acme\nstreams:\n  stable:\n    tag: v453\n    digest: sha256:41aa0c3b5e9d7f2a8c6e1b4d0f3a9c7e5b2d8f6a4c1e9b7d3f0a6c8e2b5d9f1a\n';
  const deployment =
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: acme\nspec:\n  template:\n    spec:\n      containers:\n        - name: acme\n          image: ghcr.io/acme/acme:v452\n';
  const link = (path: string, fn: string, args: { ParameterName: string; Value: string; Evaluator?: string }[]) => ({
    Slug: 'registry',
    UpdateType: 'TransformPaths' as const,
    UpstreamPaths: [
      { Name: 'v', Path: path, Resource: { ResourceType: 'registrybot.confighub.com/v1alpha4', ResourceName: 'acme' } },
    ],
    DownstreamSetters: [{ Parameters: ['v'], FunctionInvocation: { FunctionName: fn, Arguments: args } }],
  });
  it("the spec's registrybot example: the tag with ':', the digest with '@', by container name or repository", () => {
    const byName = applyTransform(
      link('streams.stable.tag', 'set-container-image-reference', [
        { ParameterName: 'container-name', Value: 'acme' },
        { ParameterName: 'image-reference', Value: ':{{.Params.v}}', Evaluator: 'template' },
      ]),
      registry,
      deployment,
    );
    expect(byName.values).toEqual({ v: 'v453' });
    expect(byName.data).toContain('image: ghcr.io/acme/acme:v453');
    expect(byName.written).toEqual([expect.objectContaining({ Path: expect.stringContaining('image') })]);
    const byDigest = applyTransform(
      link('streams.stable.digest', 'set-image-reference-by-uri', [
        { ParameterName: 'repository-uri', Value: 'ghcr.io/acme/acme' },
        { ParameterName: 'image-reference', Value: '@{{ .Params.v }}', Evaluator: 'template' },
      ]),
      registry,
      deployment,
    );
    expect(byDigest.data).toContain(
      'image: ghcr.io/acme/acme@sha256:41aa0c3b5e9d7f2a8c6e1b4d0f3a9c7e5b2d8f6a4c1e9b7d3f0a6c8e2b5d9f1a',
    );
  });
  it('names what it cannot read', () => {
    expect(() =>
      applyTransform(link('streams.canary.tag', 'set-container-image-reference', []), registry, deployment),
    ).toThrow("link 'registry': streams.canary.tag in the upstream is missing");
    expect(() =>
      applyTransform(
        {
          ...link('streams.stable.tag', 'set-container-image-reference', []),
          UpstreamPaths: [{ Name: 'v', Path: 'x', Resource: { ResourceType: 'other/v1', ResourceName: 'acme' } }],
        },
        registry,
        deployment,
      ),
    ).toThrow("link 'registry': the upstream has no resource other/v1 acme");
  });
});

describe('Insert and Upsert Links, resolved', () => {
  const appConfig =
    'configHub:\n  configSchema: acme.example.com/v1\n  configName: settings\nlog:\n  level: info # quiet by default\nfeatures: [a, b]\n';
  const configMap = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: acme-settings\ndata:\n  other: kept\n';
  const resource = { ResourceType: 'acme.example.com/v1', ResourceName: 'settings' };
  const setter = (value: string) => [
    {
      Parameters: ['doc'],
      FunctionInvocation: {
        FunctionName: 'set-string-path',
        Arguments: [
          { ParameterName: 'resource-type', Value: 'v1/ConfigMap' },
          { ParameterName: 'path', Value: 'data["settings.yaml"]' },
          { ParameterName: 'value', Value: value, Evaluator: 'template' },
        ],
      },
    },
  ];

  it('Insert writes a whole upstream resource, or a map under it, as a string', () => {
    const whole = applyTransform(
      {
        Slug: 'cfg',
        UpdateType: 'Insert',
        UpstreamPaths: [{ Name: 'doc', Resource: resource }],
        DownstreamSetters: setter('{{ .Params.doc }}'),
      },
      appConfig,
      configMap,
    );
    expect(whole.values.doc).toBe(
      'configHub:\n  configSchema: acme.example.com/v1\n  configName: settings\nlog:\n  level: info\nfeatures:\n  - a\n  - b\n',
    );
    expect(whole.data).toContain('other: kept');
    expect(whole.data).toContain('settings.yaml: |');
    expect(whole.written).toEqual([{ Resource: 'ConfigMap/acme-settings', Path: 'data["settings.yaml"]' }]);
    const part = applyTransform(
      {
        Slug: 'cfg',
        UpdateType: 'Insert',
        UpstreamPaths: [{ Name: 'doc', Path: 'log', Resource: resource }],
        DownstreamSetters: setter('{{ .Params.doc }}'),
      },
      appConfig,
      configMap,
    );
    expect(part.values.doc).toBe('level: info\n');
    // A single value is inserted as its text; TransformPaths refuses a map where it wants a single value.
    expect(
      applyTransform(
        {
          Slug: 'cfg',
          UpdateType: 'Insert',
          UpstreamPaths: [{ Name: 'doc', Path: 'log.level', Resource: resource }],
          DownstreamSetters: setter('level={{ .Params.doc }}'),
        },
        appConfig,
        configMap,
      ).data,
    ).toContain('settings.yaml: level=info');
    expect(() =>
      applyTransform(
        {
          Slug: 'cfg',
          UpdateType: 'TransformPaths',
          UpstreamPaths: [{ Name: 'doc', Path: 'log', Resource: resource }],
          DownstreamSetters: setter('{{ .Params.doc }}'),
        },
        appConfig,
        configMap,
      ),
    ).toThrow("link 'cfg': log in the upstream is not a single value");
  });

  it('Upsert replaces the downstream resource of the same type and name, or adds it, after its setters transform the copy', () => {
    const upstream =
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: acme\nspec:\n  ports:\n    - port: 8080\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata:\n  region: eu\n';
    const downstream =
      '# the app\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: acme\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: acme\nspec:\n  ports:\n    - port: 80\n';
    const all = applyTransform({ Slug: 'svc', UpdateType: 'Upsert' }, upstream, downstream);
    expect(all.data).toBe(
      '# the app\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: acme\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: acme\nspec:\n  ports:\n    - port: 8080\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata:\n  region: eu\n',
    );
    expect(all.written).toEqual([
      { Resource: 'Service/acme', Path: '' },
      { Resource: 'ConfigMap/shared', Path: '' },
    ]);
    // Only the named resource, with a label set on the carried copy from a value the Link reads.
    const one = applyTransform(
      {
        Slug: 'svc',
        UpdateType: 'Upsert',
        UpstreamPaths: [
          { Name: 'cm', Resource: { ResourceType: 'v1/ConfigMap', ResourceName: 'shared' } },
          { Name: 'region', Path: 'data.region', Resource: { ResourceType: 'v1/ConfigMap', ResourceName: 'shared' } },
        ],
        DownstreamSetters: [
          {
            Parameters: ['region'],
            FunctionInvocation: {
              FunctionName: 'set-label',
              Arguments: [
                { ParameterName: 'key', Value: 'region' },
                { ParameterName: 'value', Value: '{{ .Params.region }}', Evaluator: 'template' },
              ],
            },
          },
        ],
      },
      upstream,
      downstream,
    );
    expect(one.data).toContain('port: 80\n');
    expect(one.data).toContain('kind: ConfigMap\nmetadata:\n  name: shared\n  labels:\n    region: eu');
    expect(one.written).toEqual([{ Resource: 'ConfigMap/shared', Path: '' }]);
    expect(() =>
      applyTransform(
        {
          Slug: 'svc',
          UpdateType: 'Upsert',
          UpstreamPaths: [{ Name: 'x', Resource: { ResourceType: 'v1/Secret', ResourceName: 'nope' } }],
        },
        upstream,
        downstream,
      ),
    ).toThrow("link 'svc': the upstream has no resource v1/Secret nope");
  });

  it('set-string-path refuses a path into a list and a key where no map is', () => {
    expect(() => runFunction('set-string-path', ['v1/ConfigMap', 'data.?name=x', 'v'], configMap)).toThrow(
      /must name map keys/,
    );
    expect(() => runFunction('set-string-path', ['v1/ConfigMap', 'data.other.deeper', 'v'], configMap)).toThrow(
      "set-string-path: ConfigMap/acme-settings has no map at 'data.other.deeper' to set a string in",
    );
  });
});
