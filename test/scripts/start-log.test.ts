/**
 * What `npm start` tells its processes about their log: plain lines for a person at the terminal by
 * default, JSON lines one setting away (LOG_FORMAT=json), anything else refused before a process starts.
 */
import { describe, expect, it } from "vitest";
import { loadStartOptions, StartConfigError } from "../../scripts/lib/stack-config.ts";
import { PROJECT_ROOT } from "../support/stack.ts";

describe("npm start's LOG_FORMAT", () => {
  it("is plain by default, for the stack and beside it for a validator", () => {
    expect(loadStartOptions({}, [], PROJECT_ROOT).settings.env).toEqual({ LOG_FORMAT: "plain" });
    expect(loadStartOptions({}, ["--validator"], PROJECT_ROOT).settings.env).toMatchObject({ LOG_FORMAT: "plain" });
  });

  it("is json when asked, for every process", () => {
    expect(loadStartOptions({ LOG_FORMAT: "json" }, [], PROJECT_ROOT).settings.env).toEqual({ LOG_FORMAT: "json" });
  });

  it("refuses another value, naming the variable", () => {
    expect(() => loadStartOptions({ LOG_FORMAT: "pretty" }, [], PROJECT_ROOT)).toThrow(StartConfigError);
    expect(() => loadStartOptions({ LOG_FORMAT: "pretty" }, [], PROJECT_ROOT)).toThrow(/LOG_FORMAT/);
  });
});
