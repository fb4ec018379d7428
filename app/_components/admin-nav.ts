/** Nav entries only admins see (app/_components/shell.tsx appends them for the admin role). */
export const ADMIN_NAV = [
  { href: "/webhooks", label: "Webhooks" },
  { href: "/people", label: "People" },
] as const;
