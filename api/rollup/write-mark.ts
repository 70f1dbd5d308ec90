/**
 * The highest input index this api has answered a write for: every read must see at least that input, so
 * a client that got a 200 for a write never reads a state without it, whichever reader (or, with
 * replicas, whichever replica) serves the read. Replicas share the mark through Redis (api/redis/
 * write-mark.ts); while Redis cannot answer, each keeps its own, and a read that crosses replicas then
 * relies on the client's X-Min-Input-Index (docs/operations.md, Readers).
 */
export interface SharedWriteMark {
  /** The highest index any replica recorded; throws when it cannot tell. */
  read(): Promise<number | undefined>;
  /** Raises the shared mark to `inputIndex` (never lowers it); throws when it cannot. */
  raise(inputIndex: number): Promise<void>;
}

export class WriteMark {
  private local = -1;

  constructor(
    private readonly shared?: SharedWriteMark,
    private readonly onSharedFailure: (error: unknown) => void = () => {},
  ) {}

  /** The highest input index this replica answered a write for (-1: none): known without asking anyone. */
  get own(): number {
    return this.local;
  }

  /** A write was recorded at `inputIndex`: called before its answer leaves, so any read after it sees it. */
  async note(inputIndex: number): Promise<void> {
    this.local = Math.max(this.local, inputIndex);
    if (this.shared === undefined) return;
    try {
      await this.shared.raise(inputIndex);
    } catch (error) {
      this.onSharedFailure(error);
    }
  }

  /** The highest input index any replica answered a write for (-1: none); this replica's own while the shared mark cannot tell. */
  async highest(): Promise<number> {
    if (this.shared === undefined) return this.local;
    try {
      return Math.max(this.local, (await this.shared.read()) ?? -1);
    } catch (error) {
      this.onSharedFailure(error);
      return this.local;
    }
  }
}
