import { getDb } from "@/server/db";

export const dynamic = "force-dynamic";

export default async function Home() {
  const [row] = await getDb().$queryRaw<{ now: Date }[]>`SELECT statement_timestamp() AS now`;
  return (
    <main>
      <h1>Work Graph</h1>
      <p>
        Database: <strong>ok</strong> · server time <time dateTime={row!.now.toISOString()}>{row!.now.toISOString()}</time>
      </p>
    </main>
  );
}
