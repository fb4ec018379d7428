import { randomBytes } from "node:crypto";

export const WORK_ITEM_ID = /^[a-z0-9][a-z0-9._-]{0,99}$/;

/** A readable id for an item created without one: a slug of its title plus a random suffix. */
export function generateWorkItemId(title: string): string {
  const slug = title
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48)
    .replace(/-+$/, "");
  const suffix = randomBytes(5).toString("hex").slice(0, 6);
  return slug ? `${slug}-${suffix}` : `item-${suffix}`;
}
