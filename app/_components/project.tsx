"use client";

import { usePathname, useSearchParams } from "next/navigation";
import { createContext, useContext, useEffect, useState, type ReactNode } from "react";

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

/** The whole project state, for the switcher. */
export function useProjectState(): ProjectState {
  return useContext(ProjectContext);
}
