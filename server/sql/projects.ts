import type { Db } from "../db";
import type { Tx } from "../database/transaction";

/* Projects (rule 12 (projects scope tokens)): every item belongs to one; "default" always exists. */

export interface ProjectRow {
  id: string;
  name: string;
  createdAt: Date;
}

/** Inserts the project; undefined when the id is taken. */
export async function insertProjectUnlessTaken(db: Db | Tx, id: string, name: string): Promise<ProjectRow | undefined> {
  const [row] = await db.$queryRaw<ProjectRow[]>`
    INSERT INTO projects (id, name) VALUES (${id}, ${name}) ON CONFLICT (id) DO NOTHING
    RETURNING id, name, created_at AS "createdAt"`;
  return row;
}

/** The projects with the given ids (every project when `ids` is null), by id. */
export async function selectProjects(db: Db | Tx, ids: string[] | null): Promise<ProjectRow[]> {
  return db.$queryRaw<ProjectRow[]>`
    SELECT id, name, created_at AS "createdAt" FROM projects
     WHERE ${ids === null} OR id = ANY(${ids ?? []}::text[]) ORDER BY id COLLATE "C"`;
}

/** The first of `ids` that is not a project, or undefined when all exist. */
export async function firstUnknownProject(db: Db | Tx, ids: string[]): Promise<string | undefined> {
  if (ids.length === 0) return undefined;
  const [row] = await db.$queryRaw<{ id: string }[]>`
    SELECT given.id FROM unnest(${ids}::text[]) WITH ORDINALITY AS given(id, n)
     WHERE NOT EXISTS (SELECT 1 FROM projects p WHERE p.id = given.id) ORDER BY given.n LIMIT 1`;
  return row?.id;
}
