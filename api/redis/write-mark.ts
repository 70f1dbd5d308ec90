/** The replicas' shared write mark (api/rollup/write-mark.ts) in one Redis key per application. */
import type { Redis } from "ioredis";
import type { SharedWriteMark } from "../rollup/write-mark.ts";

const WRITE_MARK_KEY_PREFIX = "attestation-api:written:";

/** Sets the key to ARGV[1] unless it already holds as much: the mark only rises, whatever order replicas write in. */
const RAISE_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '-1')
if tonumber(ARGV[1]) > current then redis.call('SET', KEYS[1], ARGV[1]) end
return 0`;

export class RedisWriteMark implements SharedWriteMark {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    application: string,
  ) {
    this.key = `${WRITE_MARK_KEY_PREFIX}${application.toLowerCase()}`;
  }

  async read(): Promise<number | undefined> {
    const value = await this.redis.get(this.key);
    return value === null ? undefined : Number(value);
  }

  async raise(inputIndex: number): Promise<void> {
    await this.redis.eval(RAISE_SCRIPT, 1, this.key, String(inputIndex));
  }
}
