/**
 * Every flag a `cub` command takes: its value's name (none for a switch) and what it does. Each verb
 * names the flags it reads (cli/commands/<noun>.ts); commander parses, refuses the rest, and prints
 * these lines in `--help`.
 */
export interface FlagSpec {
  /** The value's placeholder, e.g. `<k=v>`; absent for a switch. */
  value?: string;
  help: string;
  short?: string;
  /** Kept in the parser to answer with what to do instead, never listed. */
  hidden?: boolean;
}

export const FLAGS: Record<string, FlagSpec> = {
  // everywhere
  server: { value: '<url>', help: 'the Baton API to talk to (else --context, CUB_SERVER, the context in use)' },
  token: { value: '<token>', help: 'bearer token (else --context, CUB_TOKEN, the context in use)' },
  context: { value: '<name>', help: 'use the server and token of this saved context (cub context list)' },
  output: { value: '<format>', short: 'o', help: 'table (default), json or yaml' },
  quiet: { short: 'q', help: 'print only names/IDs, one a line' },
  // selecting
  space: { value: '<space>', help: 'the Space it lives in' },
  unit: { value: '<unit>', help: 'the Unit (repeat or comma-separate where several are taken)' },
  'where-field': { value: '<where>', help: 'the where expression the Filter saves' },
  where: { value: '<where>', help: 'only what matches this where expression, e.g. "Labels.Stage = \'Prod\'"' },
  filter: { value: '<space/filter>', help: 'only what this saved Filter selects' },
  limit: { value: '<n>', help: 'at most this many' },
  continue: { value: '<token>', help: 'the next page, from the previous list' },
  revision: {
    value: '<rev>',
    help: 'a revision: number, Tag:<tag>, ChangeSet:<cs>, Before:…, HeadRevisionNum, LastReleasedRevisionNum',
  },
  release: { value: '<n>', help: 'the Release number (default: the newest published)' },
  // describing
  'display-name': { value: '<name>', help: 'a human name' },
  label: { value: '<k=v>', help: 'set a label (repeatable)' },
  'remove-label': { value: '<key>', help: 'remove a label (repeatable)' },
  annotation: { value: '<k=v>', help: 'set an annotation (repeatable)' },
  'remove-annotation': { value: '<key>', help: 'remove an annotation (repeatable)' },
  description: { value: '<text>', help: 'what it is for' },
  'change-desc': { value: '<text>', help: 'the description of the revision this writes' },
  'new-slug': { value: '<slug>', help: 'rename to this slug' },
  fact: { value: '<k=v>', help: 'a fact about the Target, e.g. cluster=prod-euw1 (repeatable)' },
  'argocd-application': {
    value: '<namespace/name>',
    help: 'the Argo CD Application that deploys the Target: its notifications apply to the Spaces releasing to it',
  },
  'flux-object': {
    value: '<kind/namespace/name>',
    help: 'the Flux Kustomization or HelmRelease that deploys the Target: its events apply to the Spaces releasing to it',
  },
  'remove-deploy-object': { help: 'take the Argo CD or Flux object off the Target' },
  // spaces and units
  'release-target': { value: '<space/target>', help: 'where Releases of this Space deploy ("" clears)' },
  target: { value: '<space/target>', help: 'the release Target ("" clears)' },
  component: { value: '<component>', help: 'the Component (the application across its variants)' },
  recursive: { help: 'delete its Units and Links too, if no delete gate holds' },
  'recursive-force': { help: 'delete its Units and Links too, past delete gates' },
  toolchain: { value: '<type>', help: 'the toolchain of the data (default Kubernetes/YAML)' },
  changeset: { value: '<changeset>', help: 'write within this open ChangeSet' },
  force: { help: 'go ahead although a gate would refuse (recorded)' },
  from: { value: '<rev>', help: 'the revision to compare from' },
  to: { value: '<rev>', help: 'the revision to compare to (default the head)' },
  move: { help: 'move the tag if it already marks another revision' },
  protect: { help: 'protect the paths this changes from upstream merges' },
  'dry-run': { help: 'show what would happen; write nothing' },
  explain: {
    help: 'with --dry-run: every gate over each Space, what it read and what would open it (cub changeorder explain)',
  },
  async: {
    help: 'run as a job on the server (it does so anyway above its size threshold) and follow it to the end with a progress bar',
  },
  detach: {
    help: 'run as a job and leave it running: print its ID (-q: the ID alone) and return; cub job get <id> follows it',
  },
  // upgrade and merge
  upgrade: { help: 'merge what the upstream Unit gained since the last merge' },
  'change-order': { value: '<space/change-order>', help: 'the ChangeOrder this carries' },
  'prior-revisions': { value: '<mode>', help: 'upstream revisions before the change: Include, Skip, Error or All' },
  'merge-source': { value: '<space/unit>', help: 'merge from this Unit' },
  'merge-base': { value: '<n>', help: 'the merge-source revision to merge from' },
  'merge-end': { value: '<n>', help: 'the merge-source revision to merge to' },
  squash: { help: 'one revision for everything merged, not one per upstream revision' },
  restore: { value: '<rev>', help: 'make the data what it was at this revision' },
  revert: { value: '<range>', help: 'undo the changes of these revisions, e.g. 4 or 4-6' },
  patch: { help: 'change the Unit in place (with --resolve)' },
  resolve: {
    value: '<Link:*|Link:name>',
    help: 'resolve its TransformPaths Links against their upstream (head, or --merge-end)',
  },
  apply: { help: 'take the upstream values of the conflicting paths' },
  dismiss: { help: 'keep the downstream values and clear the conflicts' },
  // links and variants
  'update-type': { value: '<type>', help: 'UpgradeUnit or MergeUnits' },
  'from-stdin': { help: 'read the rest of the link (TransformPaths, Insert, Upsert…) as YAML from standard input' },
  'auto-update': { value: '<true|false>', help: 'whether the link merges on its own' },
  variant: { value: '<name>', help: 'the variant name (the Space becomes <component>-<variant>)' },
  granularity: { value: '<how>', help: 'per-file: one Unit per YAML file' },
  stage: { value: '<stage>', help: 'the Stage label of the Space (repeat on a workflow: one per Stage, in order)' },
  environment: { value: '<env>', help: 'the Environment label of the Space' },
  region: { value: '<region>', help: 'the Region label of the Space' },
  'space-label': { value: '<k=v>', help: 'another label of the Space (repeatable)' },
  'space-slug': { value: '<slug>', help: 'the slug of the new Space (default <upstream>-<name>)' },
  namespace: { value: '<ns>', help: 'the Kubernetes namespace of the variant' },
  'unit-delete-gate': { value: '<gate>', help: 'a delete gate on every cloned Unit (repeatable)' },
  // promotion
  'target-stage': { value: '<stage>', help: 'promote up to this Stage (default the next)' },
  'where-space': { value: '<where>', help: 'only the Spaces of the Stage this selects' },
  'force-reason': { value: '<text>', help: 'why the gates are overridden (required with --force)' },
  reason: { value: '<text>', help: 'why the hold is placed (shown to whoever it stops)' },
  workflow: { value: '<space/workflow>', help: 'hold the ChangeOrders made with this workflow' },
  organization: { help: 'hold the whole organization (an Admin only)' },
  blocks: { value: '<promote,publish>', help: 'what the hold stops: promote (default), publish, or both' },
  // deploy windows
  cron: { value: '<cron>', help: 'when it opens: five fields (minute hour day month weekday), e.g. "0 9 * * 1-4"' },
  duration: { value: '<duration>', help: 'how long each opening lasts, e.g. 6h, 90m, 2d' },
  'time-zone': { value: '<zone>', help: 'the IANA time zone the cron is read in, e.g. Europe/Berlin (default UTC)' },
  start: { value: '<time>', help: 'a one-off window: when it opens (ISO time)' },
  end: { value: '<time>', help: 'a one-off window: when it closes (ISO time)' },
  deny: { help: 'a freeze: promotions wait while it is in force, instead of only going while it is open' },
  'override-approvals': {
    value: '<n>',
    help: 'how many people besides the one forcing must approve an override first (default 0: --force alone)',
  },
  owner: { value: '<user>', help: 'whose it is, by slug (default you): they or an Admin may delete it' },
  window: { value: '<window>', help: 'the deploy window, by slug or ID' },
  url: { value: '<url>', help: 'the http(s) address the JSON is posted to (a Slack incoming webhook works as is)' },
  secret: {
    value: '<key>',
    help: 'sign each body: X-Baton-Signature: sha256=<HMAC-SHA256 of it with this key> (16+ characters)',
  },
  on: {
    value: '<events>',
    help: 'what it is told of: StageAdvanced, Blocked, Recalled, Completed (comma-separated)',
  },
  'blocked-for': {
    value: '<duration>',
    help: 'with Blocked: how long a change order’s next Stage stays shut before it is told (default 1h; 5m to 30d)',
  },
  since: { value: '<duration>', help: 'the period: change orders made in the last 30d (default), 12h…' },
  tag: { value: '<tag>', help: 'the revisions of this Tag' },
  clearance: { value: '<x>', help: 'not supported', hidden: true },
  guard: { value: '<x>', help: 'not supported', hidden: true },
  subgroup: { value: '<x>', help: 'not supported', hidden: true },
  // releases
  sync: { value: '<state>', help: 'Synced, OutOfSync or Unknown' },
  health: { value: '<state>', help: 'Healthy, Progressing, Degraded, Suspended, Missing or Unknown' },
  operation: { value: '<state>', help: 'Running, Succeeded or Failed' },
  message: { value: '<text>', help: 'what the deploy tool said' },
  reporter: { value: '<name>', help: 'who reports (default cub)' },
  // workflows and change orders
  filename: { value: '<file|->', help: 'read it from this file (- for standard input)' },
  changeworkflow: { value: '<space/workflow>', help: 'clone this ChangeWorkflow' },
  'dest-space': { value: '<space>', help: 'the Space the clone goes to' },
  prerequisites: { value: '<a,b>', help: 'what must hold before the change order completes' },
  'stage-where-space': { value: '<stage=where>', help: 'which Spaces a Stage selects (repeatable)' },
  'stage-prerequisites': { value: '<stage=a;b>', help: 'what must hold before a Stage is promoted into (repeatable)' },
  'stage-release-prerequisites': {
    value: '<stage=a;b>',
    help: 'what must hold before a Stage is released (repeatable)',
  },
  'attestation-prerequisite': { value: '<name>', help: 'an attestation the workflow asks for (repeatable)' },
  'attestation-prerequisite-count': { value: '<name=n>', help: 'how many of that attestation (repeatable)' },
  'change-workflow': { value: '<space/workflow>', help: 'the ChangeWorkflow to copy (default the Space’s own)' },
  'in-scope-space': { value: '<space>', help: 'a Space in scope (repeat or comma-separate)' },
  'where-space-field': { value: '<where>', help: 'the Spaces in scope, by where expression' },
  'space-filter': { value: '<space/filter>', help: 'the Spaces in scope, by saved Filter' },
  'end-tag': { value: '<tag>', help: 'the change ends at the revisions of this Tag (default each head)' },
  'allow-exists': { help: 'answer with the existing change order rather than refuse a duplicate' },
  'refresh-spaces': { help: 'resolve the scope again (Spaces added since creation)' },
  // people
  role: { value: '<role>', help: 'Admin, Member or Viewer (default Member)' },
  user: { value: '<user>', help: 'a user, by slug or ID' },
  member: { value: '<user>', help: 'a member, by slug or ID (repeatable)' },
  service: {
    value: '<name>',
    help: 'a service token for this deploy tool (argocd, flux…): it carries a scope, not a user’s rights',
  },
  scope: { value: '<scope>', help: 'what a service token may do: ReportStatus (post to /hooks, write live status)' },
  'require-signature': {
    help: 'hooks sent with the token must be signed (Flux generic-hmac: X-Signature, keyed by the token)',
  },
  'expires-in': { value: '<duration>', help: 'how long it counts for, e.g. 720h, 30d' },
  permission: {
    value: '<verb=user:u|group:g>',
    help: 'grant View, Edit, Approve, Manage or ReportStatus in the Space (repeatable)',
  },
  'remove-permission': {
    value: '<verb[=user:u|group:g]>',
    help: 'take a grant back; a verb alone goes back to the role defaults (repeatable)',
  },
  invocation: { value: '<space/invocation>', help: 'Invoke: the Invocation to run in each Space' },
  param: { value: '<k=v>', help: 'Invoke: a value for one of the Invocation’s parameters (repeatable)' },
  'where-unit': { value: '<where>', help: 'Invoke: the Units it runs on, by where expression' },
  'unit-filter': { value: '<space/filter>', help: 'Invoke: the Units it runs on, by saved Filter' },
  parameter: {
    value: '<name:type:required>',
    help: 'a parameter the Invocation declares, e.g. tag:string:true (repeatable)',
  },
  // attestations
  type: {
    value: '<type>',
    help: 'the attestation type, e.g. ChangeRecord, SecurityReview (Approval is cub variant approve)',
  },
  claim: { value: '<k=v>', help: 'something worth keeping with it, e.g. a change ticket (repeatable)' },
  note: { value: '<text>', help: 'the reason, in words' },
  reject: { help: 'record a rejection, which blocks a requirement until it is revoked' },
  all: { help: 'every Unit, not only those a Release would publish (a base has no Target)' },
  'remove-space': {
    value: '<space>',
    help: 'take a Space that holds none of the change out of its scope (repeatable; recorded, and a refresh leaves it out)',
  },
  'aborted-reason': {
    value: '<text>',
    help: 'abort the change order, saying why ("" undoes the abort while nothing has been restored)',
  },
};

/** The flags every command takes. */
export const GLOBAL = ['server', 'token', 'context', 'output', 'quiet'] as const;

/** Flags of the established product's promote that Baton does not have, each refused with what to do instead. */
export const UNSUPPORTED: Record<string, string> = {
  clearance:
    '--clearance is not supported: Baton keeps no path guards for a clearance to admit (cub unit update has none either); what holds a path against a merge is --protect',
  guard:
    '--guard is not supported: Baton keeps no path guards to stamp on what a write changes; --protect protects the paths an Invoke promotion writes',
  subgroup: '--subgroup is not supported: promote part of a Stage by naming its Spaces with --where-space or <space>',
};
