import type { ReleaseLiveStatus } from '../model/entities.ts';
import { ArgoApplication, FluxEvent } from './contracts.ts';

/** What a deploy tool's event says: which Release (by Space slug, and number or digest) and its live status. */
export interface LiveStatusReport {
  /** The Space the report names itself (the baton.io/space annotation or metadata), if it does. */
  namedSpace?: string;
  /** The tool's object it is about, as a Target names it (`argocd:ns/name`, then `argocd:name`; `flux:Kind/ns/name`), most specific first. */
  objects: string[];
  /** The object's name: where neither the report nor a Target names a Space, the Space of that name. */
  objectName: string;
  releaseNum?: number;
  digest?: string;
  /** The revision the tool reports deployed, as it wrote it (a digest is read from it). */
  revision?: string;
  status: ReleaseLiveStatus;
}

/** Annotation (Argo CD) or event metadata (Flux) keys that name the Space and the Release. */
export const SPACE_KEYS = ['baton.io/space', 'space'];
export const RELEASE_KEYS = ['baton.io/release', 'release'];
export const DIGEST_KEYS = ['baton.io/release-digest', 'digest'];

function pick(map: Record<string, string> | undefined, keys: string[]): string | undefined {
  for (const k of keys) if (map?.[k]) return map[k];
  return undefined;
}

/** `sha256:<hex>`, `main@sha256:<hex>`, `latest@sha256:<hex>` or a bare hex digest → the hex digest. */
export function digestOf(revision: string | undefined): string | undefined {
  const m = revision ? /(?:^|[@:])([a-f0-9]{64})$/.exec(revision) : null;
  return m?.[1];
}

function num(v: string | undefined): number | undefined {
  return v && /^\d+$/.test(v) ? Number(v) : undefined;
}

/**
 * Argo CD: sync Synced/OutOfSync else Unknown; health as reported (Healthy, Progressing, Degraded,
 * Suspended, Missing, else Unknown); operation Running|Terminating → Running, Succeeded, Failed|Error
 * → Failed, none → "".
 */
export function mapArgoCd(payload: unknown, receivedAt: string): LiveStatusReport | { error: string } {
  const body = payload && typeof payload === 'object' && 'app' in payload ? (payload as { app: unknown }).app : payload;
  const parsed = ArgoApplication.safeParse(body);
  if (!parsed.success)
    return {
      error: `not an Argo CD application: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}`,
    };
  const app = parsed.data;
  const notes = { ...app.metadata.labels, ...app.metadata.annotations };
  const sync = app.status?.sync?.status;
  const health = app.status?.health?.status;
  const phase = app.status?.operationState?.phase;
  // The revision synced (one source's, or the first of a multi-source app's that names a digest), else the last operation's.
  const revisions = [
    app.status?.sync?.revision,
    ...(app.status?.sync?.revisions ?? []),
    app.status?.operationState?.syncResult?.revision,
    ...(app.status?.operationState?.syncResult?.revisions ?? []),
  ].filter((r): r is string => !!r);
  const revision = revisions.find((r) => digestOf(r)) ?? revisions[0];
  // Observed when the newest of the times the application carries says; a body without one, when it arrived.
  const times = [
    app.status?.reconciledAt,
    app.status?.operationState?.finishedAt,
    app.status?.health?.lastTransitionTime,
  ].filter((t): t is string => !!t && !Number.isNaN(Date.parse(t)));
  const observedAt = times.length ? times.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a)) : receivedAt;
  const status: ReleaseLiveStatus = {
    Sync: sync === 'Synced' || sync === 'OutOfSync' ? sync : 'Unknown',
    Health:
      (['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing'] as const).find((h) => h === health) ?? 'Unknown',
    Operation:
      phase === 'Running' || phase === 'Terminating'
        ? 'Running'
        : phase === 'Succeeded'
          ? 'Succeeded'
          : phase === 'Failed' || phase === 'Error'
            ? 'Failed'
            : '',
    Reporter: 'argocd',
    DataSource: `argocd:${app.metadata.namespace ? `${app.metadata.namespace}/` : ''}${app.metadata.name}`,
    Message: app.status?.operationState?.message ?? app.status?.health?.message ?? '',
    ObservedAt: observedAt,
  };
  const { name, namespace } = app.metadata;
  return {
    namedSpace: pick(notes, SPACE_KEYS),
    objects: [...(namespace ? [`argocd:${namespace}/${name}`] : []), `argocd:${name}`],
    objectName: name,
    releaseNum: num(pick(notes, RELEASE_KEYS)),
    digest: digestOf(pick(notes, DIGEST_KEYS)) ?? digestOf(revision),
    revision,
    status,
  };
}

/** Flux reasons that mean the reconciliation is still under way. */
const FLUX_PROGRESSING = new Set([
  'Progressing',
  'ProgressingWithRetry',
  'DependencyNotReady',
  'ReconciliationStarted',
]);
/** Flux reasons that mean the cluster drifted from what was applied. */
const FLUX_DRIFT = new Set(['DriftDetected']);

/**
 * Flux (Kustomization, HelmRelease): the Ready condition as the event reports it. info with a success
 * reason → Synced, Healthy, Succeeded; a progressing reason → Progressing, Running; error severity
 * (ReconciliationFailed, HealthCheckFailed, InstallFailed, UpgradeFailed…) → Degraded, Failed.
 */
export function mapFlux(payload: unknown, receivedAt: string): LiveStatusReport | { error: string } {
  const parsed = FluxEvent.safeParse(payload);
  if (!parsed.success)
    return { error: `not a Flux event: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}` };
  const e = parsed.data;
  if (!['Kustomization', 'HelmRelease'].includes(e.involvedObject.kind))
    return { error: `Flux ${e.involvedObject.kind} events carry no release status` };
  let status: ReleaseLiveStatus;
  if (e.severity === 'error')
    status = { Sync: FLUX_DRIFT.has(e.reason) ? 'OutOfSync' : 'Unknown', Health: 'Degraded', Operation: 'Failed' };
  else if (FLUX_DRIFT.has(e.reason)) status = { Sync: 'OutOfSync', Health: 'Progressing', Operation: 'Running' };
  else if (FLUX_PROGRESSING.has(e.reason)) status = { Sync: 'Unknown', Health: 'Progressing', Operation: 'Running' };
  else status = { Sync: 'Synced', Health: 'Healthy', Operation: 'Succeeded' };
  // The revision, under its key with or without the API group (revision, kustomize.toolkit.fluxcd.io/revision, helm.toolkit.fluxcd.io/revision…).
  const revision = e.metadata?.revision ?? Object.entries(e.metadata ?? {}).find(([k]) => k.endsWith('/revision'))?.[1];
  const o = e.involvedObject;
  return {
    namedSpace: pick(e.metadata, SPACE_KEYS),
    objects: o.namespace ? [`flux:${o.kind}/${o.namespace}/${o.name}`] : [],
    objectName: o.name,
    releaseNum: num(pick(e.metadata, RELEASE_KEYS)),
    digest: digestOf(pick(e.metadata, DIGEST_KEYS)) ?? digestOf(revision),
    revision,
    status: {
      ...status,
      Reporter: e.reportingController ?? 'flux',
      DataSource: `flux:${e.involvedObject.kind}/${e.involvedObject.namespace ? `${e.involvedObject.namespace}/` : ''}${e.involvedObject.name}`,
      Message: `${e.reason}: ${e.message}`,
      ObservedAt: e.timestamp || receivedAt,
    },
  };
}
