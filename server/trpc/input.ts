import { importItem, type ImportItem } from "@work-graph/contract";
import { WorkGraphError } from "../errors";

/**
 * An import's items, each checked on its own so that a bad one is named (docs/api.md "Import":
 * VALIDATION with `detail.ref`, or `detail.index` when the item has no usable ref).
 */
export function parseImportItems(items: unknown[]): ImportItem[] {
  return items.map((raw, index) => {
    const parsed = importItem.safeParse(raw);
    if (parsed.success) return parsed.data;
    const ref = (raw as { ref?: unknown } | null)?.ref;
    const issue = parsed.error.issues[0]!;
    throw new WorkGraphError("VALIDATION", `items[${index}].${issue.path.join(".")}: ${issue.message}`, {
      ref: typeof ref === "string" ? ref : null, index, issues: parsed.error.issues,
    });
  });
}

/** API.md calls the optional idempotency key `idempotencyKey`; `key` is accepted as a short alias. */
export const withKey = <T extends { idempotencyKey?: string; key?: string }>({ key, ...input }: T) => ({
  ...input,
  idempotencyKey: input.idempotencyKey ?? key,
});
