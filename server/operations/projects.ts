import type { Db } from "../db";
import type { Caller } from "../domain/types";
import { WorkGraphError } from "../errors";
import { insertProjectUnlessTaken, selectProjects, type ProjectRow } from "../sql/projects";

export interface Project {
  id: string;
  name: string;
  createdAt: string;
}

const toProject = (row: ProjectRow): Project => ({ id: row.id, name: row.name, createdAt: row.createdAt.toISOString() });

export async function createProject(db: Db, input: { id: string; name: string }): Promise<Project> {
  const row = await insertProjectUnlessTaken(db, input.id, input.name);
  if (!row) throw new WorkGraphError("DUPLICATE", `project ${input.id} already exists`, { id: input.id });
  return toProject(row);
}

/** The projects the caller may see (rule 12 (projects scope tokens)), by id. */
export async function listProjects(db: Db, caller: Caller): Promise<Project[]> {
  return (await selectProjects(db, caller.projects.length === 0 ? null : caller.projects)).map(toProject);
}
