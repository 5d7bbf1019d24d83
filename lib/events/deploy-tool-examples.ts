/**
 * The deploy tools' own payloads the event examples are made from (an Argo CD Application, a Flux event, as
 * their docs and source give them, unchanged) and the organization `cub` makes for them: the integration
 * tests post them, and docs/reference/events.md prints them.
 */
import type { ReleaseLiveStatus } from '../model/entities.ts';

/** The Unit the deploy-tool examples' Spaces release (`api.yaml`); release 1 of each bundles it alone. */
export const EXAMPLE_UNIT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: acme
spec:
  replicas: 2
  selector:
    matchLabels:
      app: api
  template:
    metadata:
      labels:
        app: api
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.4.2
`;

/** The digest of that bundle: what Baton answers `cub release get` with, and what the deploy tool reports deploying. */
export const EXAMPLE_DIGEST = 'f1322ab42d2638d20f21129334027a66264adb6c74fd91d9cca0510cdf72a352';

/** The organization the Argo CD and Flux examples are posted into, as `cub` makes it (run, as written, by the test that posts them). */
export const DEPLOY_TOOL_SETUP = [
  'cub space create clusters',
  'cub target create --space clusters prod-use1 --argocd-application argocd/acme-prod-use1',
  'cub target create --space clusters prod-euw1 --flux-object Kustomization/flux-system/acme-prod-euw1',
  'cub space create acme-prod-use1 --release-target clusters/prod-use1',
  'cub space create acme-prod-euw1 --release-target clusters/prod-euw1',
  'cub unit create --space acme-prod-use1 api api.yaml',
  'cub unit create --space acme-prod-euw1 api api.yaml',
  'cub release publish acme-prod-use1',
  'cub release publish acme-prod-euw1',
  'cub token create --service deploy-tools --scope ReportStatus',
];

export const ARGO_APP = {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: {
    name: 'acme-prod-use1',
    namespace: 'argocd',
    uid: '3f0c9a52-8d1e-4b7a-9c6d-2e5f1a0b7c84',
    resourceVersion: '918273',
  },
  spec: {
    project: 'default',
    source: { repoURL: 'oci://registry.example.com/acme/api', targetRevision: 'sha256:' + EXAMPLE_DIGEST, path: '.' },
    destination: { server: 'https://kubernetes.default.svc', namespace: 'acme' },
    syncPolicy: { automated: { prune: true, selfHeal: true } },
  },
  status: {
    sync: {
      status: 'Synced',
      revision: 'sha256:' + EXAMPLE_DIGEST,
      comparedTo: {
        source: {
          repoURL: 'oci://registry.example.com/acme/api',
          targetRevision: 'sha256:' + EXAMPLE_DIGEST,
          path: '.',
        },
        destination: { server: 'https://kubernetes.default.svc', namespace: 'acme' },
      },
    },
    health: { status: 'Healthy', lastTransitionTime: '2026-12-03T10:09:45Z' },
    operationState: {
      phase: 'Succeeded',
      message: 'successfully synced (all tasks run)',
      startedAt: '2026-12-03T10:09:28Z',
      finishedAt: '2026-12-03T10:09:31Z',
      syncResult: {
        revision: 'sha256:' + EXAMPLE_DIGEST,
        source: {
          repoURL: 'oci://registry.example.com/acme/api',
          targetRevision: 'sha256:' + EXAMPLE_DIGEST,
          path: '.',
        },
      },
    },
    reconciledAt: '2026-12-03T10:09:50Z',
    sourceType: 'Directory',
  },
};

export const FLUX_EVENT = {
  involvedObject: {
    kind: 'Kustomization',
    namespace: 'flux-system',
    name: 'acme-prod-euw1',
    uid: '7d2e4f6a-1b3c-4d5e-8f9a-0b1c2d3e4f5a',
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    resourceVersion: '56412',
  },
  severity: 'info',
  timestamp: '2026-12-03T10:09:59Z',
  message: 'Reconciliation finished in 1.204s, next run in 10m0s',
  reason: 'ReconciliationSucceeded',
  metadata: { 'kustomize.toolkit.fluxcd.io/revision': 'latest@sha256:' + EXAMPLE_DIGEST },
  reportingController: 'kustomize-controller',
  reportingInstance: 'kustomize-controller-5f8d7c9b6d-q7xlm',
};

/** What posting a deploy tool's example does: the hook it goes to, and the Release's LiveStatus afterwards. */
export interface HookOutcome {
  Hook: '/hooks/argocd' | '/hooks/flux';
  SpaceSlug: string;
  ReleaseNum: number;
  LiveStatus: ReleaseLiveStatus;
}
