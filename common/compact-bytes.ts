/**
 * The bytes of a compact batch (common/compact-batch.ts): a reader that names the absolute offset of
 * whatever it fails to read, and a writer. Integers are unsigned LEB128 varints (7 bits a byte, low bits
 * first, the top bit set on every byte but the last; minimal: no trailing zero group), at most 2^32 - 1;
 * timestamps are 4 bytes big-endian.
 */

/** Why bytes cannot be read: at which absolute offset of the input, and what was expected there. */
export class ByteProblem extends Error {
  override readonly name = "ByteProblem";
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(`byte ${offset}: ${reason}`);
  }
}

const VARINT_MAX = 0xffffffff;

export class ByteReader {
  private at = 0;

  /** `base` is where `bytes` starts in the whole input, so problems name the input's own offsets. */
  constructor(
    private readonly bytes: Uint8Array,
    private readonly base = 0,
  ) {}

  /** The absolute offset of the next byte. */
  get offset(): number {
    return this.base + this.at;
  }

  get remaining(): number {
    return this.bytes.length - this.at;
  }

  u8(what: string): number {
    if (this.remaining < 1) throw new ByteProblem(this.offset, `the input ends before ${what}`);
    return this.bytes[this.at++] as number;
  }

  u32(what: string): number {
    const bytes = this.take(4, what);
    return (((bytes[0] as number) << 24) | ((bytes[1] as number) << 16) | ((bytes[2] as number) << 8) | (bytes[3] as number)) >>> 0;
  }

  varint(what: string): number {
    const start = this.offset;
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = this.u8(what);
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) {
        if (byte === 0 && shift > 0) throw new ByteProblem(start, `${what} is not a minimal varint`);
        break;
      }
      if (shift >= 28) throw new ByteProblem(start, `${what} is a varint longer than 5 bytes`);
    }
    if (value > VARINT_MAX) throw new ByteProblem(start, `${what} is above ${VARINT_MAX}`);
    return value;
  }

  take(count: number, what: string): Uint8Array {
    if (this.remaining < count) throw new ByteProblem(this.offset, `${what} needs ${count} bytes, ${this.remaining} remain`);
    const out = this.bytes.subarray(this.at, this.at + count);
    this.at += count;
    return out;
  }

  /** A varint length, then that many bytes. */
  sized(what: string): Uint8Array {
    return this.take(this.varint(`the length of ${what}`), what);
  }

  rest(): Uint8Array {
    return this.take(this.remaining, "the rest");
  }
}

export class ByteWriter {
  private readonly parts: number[] = [];

  u8(value: number): this {
    this.parts.push(value & 0xff);
    return this;
  }

  u32(value: number): this {
    this.parts.push((value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff);
    return this;
  }

  varint(value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > VARINT_MAX) throw new RangeError(`a varint holds 0 to ${VARINT_MAX}, not ${value}`);
    let rest = value;
    while (rest >= 0x80) {
      this.parts.push((rest % 0x80) | 0x80);
      rest = Math.floor(rest / 0x80);
    }
    this.parts.push(rest);
    return this;
  }

  bytes(bytes: Uint8Array): this {
    for (const byte of bytes) this.parts.push(byte);
    return this;
  }

  sized(bytes: Uint8Array): this {
    return this.varint(bytes.length).bytes(bytes);
  }

  toBytes(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

/** The bytes a varint of `value` takes. */
export function varintLength(value: number): number {
  let length = 1;
  for (let rest = value; rest >= 0x80; rest = Math.floor(rest / 0x80)) length += 1;
  return length;
}
