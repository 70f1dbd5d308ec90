import { defineConfig } from "drizzle-kit";

// The index's tables (api/index/schema.ts) on PostgreSQL and PGlite: `npm run db:generate:index`.
export default defineConfig({
  dialect: "postgresql",
  schema: "./api/index/schema.ts",
  out: "./migrations/index",
});
