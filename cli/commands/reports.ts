import { flag, type Args } from '../args.ts';
import type { Client } from '../client.ts';
import { print } from '../output.ts';
import { span, type DeliveryReport } from '../../lib/model/timeline.ts';
import { type Command, type HelpTable, out } from '../common.ts';

/** The delivery report as a table: a line per workflow, with its four DORA figures. */
export function deliveryText(r: DeliveryReport): string {
  const rows = [
    [
      'WORKFLOW',
      'CHANGE ORDERS',
      'DEPLOYMENTS',
      'PER DAY',
      'LEAD TIME P50/P90',
      'FAILURE RATE',
      'TIME TO RESTORE P50/P90',
    ],
    ...r.Workflows.map((w) => [
      w.Workflow,
      String(w.ChangeOrders),
      String(w.Deployments),
      String(w.DeploymentsPerDay),
      w.LeadTime.map((l) => `${l.Stage} ${span(l.P50Seconds)}/${span(l.P90Seconds)}`).join(', ') || '-',
      w.ChangeFailureRate === null ? '-' : `${Math.round(w.ChangeFailureRate * 1000) / 10}% (${w.Failed})`,
      w.TimeToRestore ? `${span(w.TimeToRestore.P50Seconds)}/${span(w.TimeToRestore.P90Seconds)}` : '-',
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return (
    `Change orders made from ${r.From} to ${r.To} (${r.Since}):\n` +
    rows
      .map((row) =>
        row
          .map((x, i) => x.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') +
    '\n'
  );
}

export const reportsCommands: Record<string, Record<string, Command>> = {
  report: {
    delivery: async (a: Args, c: Client) => {
      const r = (
        await c.get<DeliveryReport>('/report/delivery', { workflow: flag(a, 'workflow'), since: flag(a, 'since') })
      ).body;
      const format = out(a);
      if (format === 'json' || format === 'yaml') return print(r, format);
      process.stdout.write(deliveryText(r));
    },
  },
};

export const reportsHelp: HelpTable = {
  report: {
    delivery: {
      summary:
        'The four DORA figures per workflow: deployment frequency, lead time (p50/p90 from the change’s first revision to each Stage), change failure rate (aborted or recalled) and time to restore (abort to restored)',
      flags: [['workflow', 'only the change orders made with this workflow (space/workflow)'], 'since'],
      example: 'cub report delivery --since 30d',
    },
  },
};
