/** Nav entries only admins see (app/_components/shell.tsx appends them for the admin role). */
export const ADMIN_NAV = [
  { href: "/webhooks", label: "Webhooks" },
  { href: "/people", label: "People" },
] as const;
/** Nav entries for operators and admins (pages that write). */
export const OPERATOR_NAV = [{ href: "/import", label: "Import" }] as const;
