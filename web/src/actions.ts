// What a person does from the page, each through the same API and checks as cub: promote (a dry run first), approve, abort.
import type { ApproveAnswer, ChangeOrderPromotion, JobAnswer } from '../../lib/api/answers.ts';
import type { Rollout } from '../../lib/model/rollout.ts';
import { ApiError, call, path, type ErrorBody } from './api.ts';
import { $, fill, h, type Child } from './dom.ts';

/** `POST /promote` with a ChangeOrder, `POST /attest`, a job: the API's own answer types (lib/api/answers.ts). */
export type Promotion = ChangeOrderPromotion;

/** Opens the dialog with a title and content. Focus goes into it, and back where it was when it closes. */
function openDialog(title: string, ...content: Child[]): HTMLDialogElement {
  const d = $('dialog') as HTMLDialogElement;
  const back = document.activeElement instanceof HTMLElement ? document.activeElement : undefined;
  fill(d, h('h2', { id: 'dialog-title' }, title), ...content);
  d.addEventListener('close', () => back?.focus(), { once: true });
  if (!d.open) d.showModal();
  return d;
}
const closeButton = (label = 'Cancel') =>
  h(
    'button',
    { type: 'button', 'data-action': 'close', onclick: () => ($('dialog') as HTMLDialogElement).close() },
    label,
  );

/** A promotion's answer in a sentence, as cub prints it. */
function summary(p: Promotion): string {
  if (p.Message && !p.Spaces.length) return p.Message;
  return `${p.DryRun ? 'Would promote' : 'Promoted'} change order into ${p.Stage ? `stage '${p.Stage}'` : 'the named spaces'}: ${p.Landed} of ${p.Total} space(s)${p.Forced ? ' (forced past failing gates)' : ''}`;
}

/** A promotion's answer as a table: each Space, what happened, and its Units. */
function promotionTable(p: Promotion): HTMLElement {
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      { id: 'promotion' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Space'),
          h('th', { scope: 'col' }, 'Action'),
          h('th', { scope: 'col' }, 'Units'),
        ),
      ),
      h(
        'tbody',
        {},
        ...p.Spaces.map((s) =>
          h(
            'tr',
            { 'data-space': s.SpaceSlug },
            h('td', {}, s.SpaceSlug),
            h('td', {}, s.Action, s.Error ? ` — ${s.Error}` : ''),
            h('td', {}, s.Units.map((u) => `${u.UnitSlug ?? ''} ${u.Action ?? ''}`.trim()).join(', ')),
          ),
        ),
      ),
    ),
  );
}

/** Promote the next Stage: a dry run first, shown; then the promotion, followed to its end when it runs as a job. */
export async function promoteDialog(r: Rollout, refresh: () => void): Promise<void> {
  const ref = `${r.Base.SpaceSlug}/${r.ChangeOrder.Slug}`;
  const status = h('div', { 'aria-live': 'polite' }, 'Previewing the promotion (a dry run: nothing is written)…');
  const d = openDialog(
    `Promote ${r.ChangeOrder.Slug}${r.Next?.Stage ? ` to ${r.Next.Stage}` : ''}`,
    status,
    h('div', { class: 'actions' }, closeButton()),
  );
  let preview: Promotion;
  try {
    preview = (await call<Promotion>('POST', '/promote', { ChangeOrderID: ref, DryRun: true })).body;
  } catch (e) {
    status.replaceChildren(h('p', { class: 'alert', role: 'alert' }, (e as Error).message));
    return;
  }
  const go = h(
    'button',
    { type: 'button', class: 'primary', 'data-action': 'confirm-promote' },
    `Promote ${preview.Total} space(s)`,
  );
  status.replaceChildren(h('p', { 'data-field': 'preview-message' }, summary(preview)), promotionTable(preview));
  d.querySelector('.actions')!.prepend(go);
  go.focus();
  go.addEventListener('click', async () => {
    go.disabled = true;
    status.replaceChildren(h('p', {}, 'Promoting…'));
    try {
      // Into the Stage the preview showed, even if another promotion moved the change on meanwhile.
      const a = await call<Promotion | JobAnswer>('POST', '/promote', {
        ChangeOrderID: ref,
        ...(preview.Stage ? { TargetStage: preview.Stage } : {}),
      });
      const done = a.status === 202 ? await followJob((a.body as JobAnswer).JobID, status) : (a.body as Promotion);
      status.replaceChildren(h('p', { 'data-field': 'result-message' }, summary(done)), promotionTable(done));
      go.remove();
      d.querySelector<HTMLButtonElement>('[data-action=close]')!.textContent = 'Close';
      d.querySelector<HTMLButtonElement>('[data-action=close]')!.focus();
    } catch (e) {
      status.replaceChildren(h('p', { class: 'alert', role: 'alert' }, (e as Error).message));
    }
    refresh();
  });
}

/** Follows a job to its end with a progress bar; its answer is the request's own. */
async function followJob(id: string, status: HTMLElement): Promise<Promotion> {
  const bar = h('progress', { max: '1', value: '0', 'aria-label': 'promotion progress' });
  status.replaceChildren(h('p', {}, `Running as job ${id}…`), bar);
  const path = `/job/${encodeURIComponent(id)}`;
  for (;;) {
    // The brief answer while it runs (counts only: one read however many Spaces), the whole one at the end.
    const b = (await call<JobAnswer>('GET', `${path}?brief=true`)).body;
    bar.max = b.Total || 1;
    bar.value = b.Done;
    if (b.State === 'Done') {
      const j = (await call<JobAnswer>('GET', path)).body;
      if ((j.Status ?? 200) >= 400)
        throw new ApiError(
          j.Status ?? 500,
          `HTTP ${j.Status}: ${(j.Result as ErrorBody | undefined)?.Message ?? 'the job failed'}`,
        );
      return j.Result as Promotion;
    }
    await new Promise((res) => setTimeout(res, 1000));
  }
}

/** Approve the change in one Space or over a Stage (a note optional): POST /attest, as cub variant approve. */
export function approveDialog(r: Rollout, where: { space?: string; stage?: string }, refresh: () => void): void {
  const ref = `${r.Base.SpaceSlug}/${r.ChangeOrder.Slug}`;
  const note = h('input', { id: 'approve-note', maxlength: '1024' });
  const status = h('div', { 'aria-live': 'polite' });
  const go = h('button', { type: 'button', class: 'primary', 'data-action': 'confirm-approve' }, 'Approve');
  openDialog(
    `Approve ${r.ChangeOrder.Slug} ${where.space ? `in ${where.space}` : `in stage ${where.stage}`}`,
    h('p', {}, 'Records an Approval attestation of the revisions the change arrived at, as cub variant approve does.'),
    h('label', { for: 'approve-note' }, 'Note (optional)'),
    note,
    status,
    h('div', { class: 'actions' }, go, closeButton()),
  );
  note.focus();
  go.addEventListener('click', async () => {
    go.disabled = true;
    try {
      const a = await call<ApproveAnswer | JobAnswer>('POST', '/attest', {
        ChangeOrderID: ref,
        ...(where.space ? { Spaces: [where.space] } : { Stage: where.stage }),
        ...(note.value ? { Note: note.value } : {}),
      });
      const spaces = a.status === 202 ? [] : (a.body as ApproveAnswer).Spaces;
      status.replaceChildren(
        h(
          'p',
          { class: 'notice', 'data-field': 'approve-result' },
          a.status === 202
            ? 'Approving as a job; the grid shows it as it lands.'
            : spaces
                .map((s) => `${s.SpaceSlug}: ${s.Action === 'Attest' ? 'approved' : `skipped (${s.Reason ?? ''})`}`)
                .join('; '),
        ),
      );
      go.remove();
    } catch (e) {
      status.replaceChildren(h('p', { class: 'alert', role: 'alert' }, (e as Error).message));
      go.disabled = false;
    }
    refresh();
  });
}

/** Abort the ChangeOrder, with the reason it records (PATCH AbortedReason, as cub changeorder update --aborted-reason). */
export function abortDialog(r: Rollout, refresh: () => void): void {
  const reason = h('input', { id: 'abort-reason', required: true, maxlength: '1024' });
  const status = h('div', { 'aria-live': 'polite' });
  const go = h('button', { type: 'button', class: 'danger', 'data-action': 'confirm-abort' }, 'Abort the change order');
  const d = openDialog(
    `Abort ${r.ChangeOrder.Slug}`,
    h(
      'p',
      {},
      'No further promotion goes ahead. Spaces that took the change keep it until each is demoted (cub variant demote).',
    ),
    h('label', { for: 'abort-reason' }, 'Reason (recorded)'),
    reason,
    status,
    h('div', { class: 'actions' }, go, closeButton()),
  );
  reason.focus();
  go.addEventListener('click', async () => {
    if (!reason.value.trim()) {
      status.replaceChildren(h('p', { class: 'alert', role: 'alert' }, 'Give the reason the change order records.'));
      reason.focus();
      return;
    }
    go.disabled = true;
    try {
      await call('PATCH', path(r.Base.SpaceSlug, r.ChangeOrder.Slug), { AbortedReason: reason.value.trim() });
      d.close();
    } catch (e) {
      status.replaceChildren(h('p', { class: 'alert', role: 'alert' }, (e as Error).message));
      go.disabled = false;
    }
    refresh();
  });
}
