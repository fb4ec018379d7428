import type { HTMLAttributes, ReactNode } from "react";

/**
 * What a column holds, which decides how its text may break (docs/dashboard.md "Tables"):
 * - "text": written by a person or an agent (titles, notes, questions, reasons): breaks anywhere,
 *   so a 5,000-character word wraps instead of widening the page;
 * - "token": what the dashboard names (times, ids, event types, actors, numbers, states): never
 *   breaks inside a word; the column sizes to it, and a <Token> too long for it ends in an ellipsis.
 * Headers never break inside a word, whatever the kind.
 */
export type ColumnKind = "text" | "token";

export interface Column<Row> {
  header: string;
  /** The header is read by assistive technology only (an actions column). */
  hideHeader?: boolean;
  /** The cell's label in the phone layout, where the header row is hidden; the header by default. */
  label?: string;
  kind: ColumnKind;
  /** Tabular figures. */
  numeric?: boolean;
  className?: string;
  cell: (row: Row, index: number) => ReactNode;
}

type RowAttributes = HTMLAttributes<HTMLTableRowElement> & { [data: `data-${string}`]: string | number | undefined };

/** A dashboard table: a header row, one row per item, and stacked cards on a phone. */
export function DataTable<Row>({ columns, rows, rowKey, rowAttributes, testId, className }: {
  columns: Column<Row>[];
  rows: readonly Row[];
  rowKey: (row: Row) => string | number;
  rowAttributes?: (row: Row) => RowAttributes;
  testId: string;
  className?: string;
}) {
  return (
    <table className={["table responsive", className].filter(Boolean).join(" ")} data-testid={testId}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th scope="col" key={column.header}>
              {column.hideHeader ? <span className="visually-hidden">{column.header}</span> : column.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row, index) => (
          <tr key={rowKey(row)} {...rowAttributes?.(row)}>
            {columns.map((column) => (
              <td
                key={column.header}
                data-label={column.label ?? column.header}
                data-kind={column.kind}
                className={[column.kind === "token" ? "cell-token" : "cell-text", column.numeric ? "num" : null, column.className].filter(Boolean).join(" ")}
              >
                {column.cell(row, index)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
