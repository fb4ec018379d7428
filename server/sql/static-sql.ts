import type { Prisma } from "../generated/prisma/client";

const PARAMETER = Symbol("sql parameter");

interface Parameter {
  [PARAMETER]: string;
}

/**
 * A stand-in for a value of a `Prisma.sql` fragment that staticSql writes as `expression`
 * (a function parameter or variable of the SQL function the fragment is compiled into).
 * Typed as the value it stands for: it goes where the fragment builders expect one.
 */
export const sqlParameter = <T = string>(expression: string): T => ({ [PARAMETER]: expression }) as Parameter as T;

const isParameter = (value: unknown): value is Parameter => typeof value === "object" && value !== null && PARAMETER in value;

function literal(value: unknown): string {
  if (isParameter(value)) return value[PARAMETER];
  if (typeof value === "string") return `'${value.replaceAll("'", "''")}'`;
  if (typeof value === "number" && Number.isInteger(value)) return String(value);
  throw new Error(`staticSql cannot write ${typeof value} values; pass it as an sqlParameter`);
}

/**
 * The text of a `Prisma.sql` fragment with its values written in: sqlParameter stand-ins as
 * their expressions, other values as literals. For a plpgsql function built from the same
 * fragments the TypeScript operations run (static SQL in a function is planned once per
 * connection; one call is one round trip).
 */
export function staticSql(sql: Prisma.Sql): string {
  return sql.strings.reduce((text, piece, index) => text + piece + (index < sql.values.length ? literal(sql.values[index]) : ""), "");
}
