import path from "node:path";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../dapp/config.ts";

describe("readConfig", () => {
  it("has defaults for everything", () => {
    expect(readConfig({})).toEqual({
      transport: { kind: "http", rollupUrl: "http://127.0.0.1:5004" },
      admins: [],
      dbPath: path.join(".data", "dapp.sqlite"),
      migrationsDir: undefined,
    });
  });

  it("reads every variable, lower-cases and dedups admins, and treats empty as unset", () => {
    expect(
      readConfig({
        ROLLUP_HTTP_SERVER_URL: "http://node:5004",
        DAPP_ADMINS: " 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266, 0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266,,0x70997970C51812dc3A010C7d01b50e0d17dc79C8 ",
        DATA_DIR: "/var/lib/app",
        DAPP_MIGRATIONS_DIR: "",
      }),
    ).toEqual({
      transport: { kind: "http", rollupUrl: "http://node:5004" },
      admins: ["0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"],
      dbPath: path.join("/var/lib/app", "dapp.sqlite"),
      migrationsDir: undefined,
    });
    expect(readConfig({ DATA_DIR: "/x", DAPP_DB_PATH: "/y/db.sqlite", DAPP_MIGRATIONS_DIR: "/m" })).toMatchObject({
      dbPath: "/y/db.sqlite",
      migrationsDir: "/m",
    });
  });

  it("takes libcmt as the transport, with the outputs tree's file for host sessions", () => {
    expect(readConfig({ DAPP_TRANSPORT: "libcmt" }).transport).toEqual({ kind: "libcmt", outputsTreeFile: undefined });
    expect(readConfig({ DAPP_TRANSPORT: "libcmt", DAPP_OUTPUTS_TREE_FILE: "/s/tree.bin" }).transport).toEqual({ kind: "libcmt", outputsTreeFile: "/s/tree.bin" });
    expect(readConfig({ DAPP_TRANSPORT: "http", ROLLUP_HTTP_SERVER_URL: "" }).transport).toEqual({ kind: "http", rollupUrl: "http://127.0.0.1:5004" });
  });

  it.each([
    [{ DAPP_TRANSPORT: "libcmt", ROLLUP_HTTP_SERVER_URL: "http://node:5004" }, "ROLLUP_HTTP_SERVER_URL is for DAPP_TRANSPORT=http"],
    [{ DAPP_OUTPUTS_TREE_FILE: "/s/tree.bin" }, "DAPP_OUTPUTS_TREE_FILE is for DAPP_TRANSPORT=libcmt"],
    [{ DAPP_TRANSPORT: "LIBCMT" }, 'DAPP_TRANSPORT: expected "http" (the rollup HTTP server) or "libcmt"'],
  ])("refuses a setting of the other transport, or an unknown one: %o", (env, message) => {
    expect(() => readConfig(env)).toThrow(`invalid dapp configuration: ${message}`);
  });

  it.each([
    ["ROLLUP_HTTP_SERVER_URL", { ROLLUP_HTTP_SERVER_URL: "localhost:5004" }],
    ["ROLLUP_HTTP_SERVER_URL", { ROLLUP_HTTP_SERVER_URL: "ftp://node" }],
    ["DAPP_ADMINS", { DAPP_ADMINS: "0x1234" }],
    ["DAPP_ADMINS", { DAPP_ADMINS: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266;0x70997970c51812dc3a010c7d01b50e0d17dc79c8" }],
  ])("names %s when its value is bad", (name, env) => {
    expect(() => readConfig(env)).toThrow(new RegExp(`^invalid dapp configuration: ${name}`));
  });
});
