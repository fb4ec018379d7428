"use client";

import { useQuery } from "@tanstack/react-query";
import { usePathname, useSearchParams } from "next/navigation";
import { createContext, useContext, useEffect, useState, type ReactNode } from "react";
import { useTRPC } from "./trpc";

/*
 * The project the dashboard is filtered to (API.md rule 12), kept in the URL as ?project=<id>
 * so a filtered view can be linked. Every link inside the dashboard may leave the parameter out:
 * the chosen project is written back into the URL after each navigation, so it is carried from
 * page to page until someone picks another one (or "All projects").
 */

export const PROJECT_PARAM = "project";

interface ProjectState {
  /** The chosen project, or undefined for every project the session may see. */
  projectId: string | undefined;
  /** The session token's projects; empty = every project (an unscoped token). */
  scope: readonly string[];
  choose: (projectId: string) => void;
}

const ProjectContext = createContext<ProjectState>({ projectId: undefined, scope: [], choose: () => undefined });

function replaceProjectInUrl(projectId: string) {
  const url = new URL(window.location.href);
  if (projectId) url.searchParams.set(PROJECT_PARAM, projectId);
  else url.searchParams.delete(PROJECT_PARAM);
  if (url.href !== window.location.href) window.history.replaceState(window.history.state, "", url);
}

export function ProjectProvider({ scope, children }: { scope: readonly string[]; children: ReactNode }) {
  const pathname = usePathname();
  const fromUrl = useSearchParams().get(PROJECT_PARAM) ?? "";
  // A token scoped to exactly one project has nothing else to show.
  const [chosen, setChosen] = useState(fromUrl || (scope.length === 1 ? scope[0]! : ""));
  // A URL that comes to name another project (a link, Back) chooses it; one that names none gets the chosen project.
  const [seenInUrl, setSeenInUrl] = useState(fromUrl);
  if (fromUrl !== seenInUrl) {
    setSeenInUrl(fromUrl);
    if (fromUrl) setChosen(fromUrl);
  }
  useEffect(() => {
    if (fromUrl !== chosen) replaceProjectInUrl(chosen);
  }, [fromUrl, chosen, pathname]);

  const choose = (next: string) => {
    setChosen(next);
    replaceProjectInUrl(next);
  };
  return <ProjectContext.Provider value={{ projectId: chosen || undefined, scope, choose }}>{children}</ProjectContext.Provider>;
}

/** The chosen project id for the `projectId` filter of a query, undefined for all. */
export function useProjectId(): string | undefined {
  return useContext(ProjectContext).projectId;
}

/** `href` with the chosen project, for links that should open filtered (in a new tab too). */
export function useProjectHref(): (href: string) => string {
  const { projectId } = useContext(ProjectContext);
  return (href) => {
    if (!projectId) return href;
    const [path, query = ""] = href.split("?");
    const params = new URLSearchParams(query);
    params.set(PROJECT_PARAM, projectId);
    return `${path}?${params}`;
  };
}

/** The top bar's project switcher: projects.list, plus "All projects" unless the token is scoped to one. */
export function ProjectSwitcher() {
  const trpc = useTRPC();
  const { projectId, scope, choose } = useContext(ProjectContext);
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
