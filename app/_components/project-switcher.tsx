"use client";

import { useQuery } from "@tanstack/react-query";
import { useProjectState } from "./project";
import { useTRPC } from "./trpc";

/** The top bar's project switcher: projects.list, plus "All projects" unless the token is scoped to one. */
export function ProjectSwitcher() {
  const trpc = useTRPC();
  const { projectId, scope, choose } = useProjectState();
  const projects = useQuery(trpc.projects.list.queryOptions({}));
  const listed = projects.data ?? [];
  const unknown = projectId && projects.data && !listed.some((project) => project.id === projectId);
  return (
    <form className="project-switcher" onSubmit={(event) => event.preventDefault()}>
      <label htmlFor="project-switcher">Project</label>
      <select id="project-switcher" value={projectId ?? ""} onChange={(event) => choose(event.target.value)} data-testid="project-switcher">
        {scope.length !== 1 ? <option value="">{scope.length === 0 ? "All projects" : "All my projects"}</option> : null}
        {listed.map((project) => (
          <option key={project.id} value={project.id}>
            {project.name === project.id ? project.id : `${project.name} (${project.id})`}
          </option>
        ))}
        {projectId && (!projects.data || unknown) ? <option value={projectId}>{unknown ? `${projectId} (unknown)` : projectId}</option> : null}
      </select>
    </form>
  );
}
