import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./dapp/db/schema.ts",
  out: "./migrations",
});
