/**
 * Printing chains (chains.ts) as one regex for common/range-pattern.ts: merged into a trie, printed with
 * prefix and suffix sharing, in RE2's syntax with non-capturing groups only.
 */
/**
 * `atom` repeated between min and max times (max may be Infinity). Atoms are single regex units, except `raw`
 * tokens: an already printed sub-pattern (a sequence, never a bare alternation) used once, never quantified.
 */
export interface Token {
  atom: string;
  min: number;
  max: number;
  raw?: true;
}
export type Chain = Token[];

export const tok = (atom: string, min = 1, max = 1): Token => ({ atom, min, max });
export interface TrieNode {
  terminal: boolean;
  edges: Map<string, { token: Token; node: TrieNode }>;
}

export const newNode = (): TrieNode => ({ terminal: false, edges: new Map() });
export const tokenKey = (t: Token): string => `${t.atom}\u0000${t.min}\u0000${t.max}`;

export function insert(root: TrieNode, chain: Chain): void {
  let node = root;
  for (const t of chain) {
    const key = tokenKey(t);
    let edge = node.edges.get(key);
    if (edge === undefined) {
      edge = { token: t, node: newNode() };
      node.edges.set(key, edge);
    }
    node = edge.node;
  }
  node.terminal = true;
}

export function quantified(atom: string, min: number, max: number): string {
  if (max === Infinity) {
    if (min === 0) return `${atom}*`;
    if (min === 1) return `${atom}+`;
    return `${atom}{${min},}`;
  }
  if (min === 0 && max === 1) return `${atom}?`;
  if (min !== max) throw new Error(`unsupported repetition {${min},${max}}`);
  const repeated = atom.repeat(min);
  const counted = `${atom}{${min}}`;
  return repeated.length <= counted.length ? repeated : counted;
}

/** Merges runs of one atom (`0*0` -> `0+`, `\d\d\d\d` -> `\d{4}`). */
export function mergeRuns(tokens: Token[]): Token[] {
  const merged: Token[] = [];
  for (const t of tokens) {
    const last = merged[merged.length - 1];
    if (last !== undefined && last.atom === t.atom && last.raw === undefined && t.raw === undefined) {
      const min = last.min + t.min;
      const max = last.max + t.max;
      // Only merge into repetitions the output syntax has (`{n}`, `{n,}`).
      if (max === Infinity || min === max) {
        merged[merged.length - 1] = { atom: t.atom, min, max };
        continue;
      }
    }
    merged.push(t);
  }
  return merged;
}

export function sequence(tokens: Token[]): string {
  return mergeRuns(tokens)
    .map((t) => (t.raw === undefined ? quantified(t.atom, t.min, t.max) : t.atom))
    .join("");
}

/** The tokens made optional, as one token: `x` -> `x?`, `x+` -> `x*`, anything longer -> `(?:...)?`. */
export function optionalToken(tokens: Token[]): Token {
  const merged = mergeRuns(tokens);
  if (merged.length === 1) {
    const t = merged[0] as Token;
    if (t.raw === undefined && t.min === 1 && t.max === 1) return { atom: t.atom, min: 0, max: 1 };
    if (t.raw === undefined && t.min <= 1 && t.max === Infinity) return { atom: t.atom, min: 0, max: Infinity };
  }
  return rawText(`(?:${sequence(tokens)})?`);
}

export const rawText = (text: string): Token => ({ atom: text, min: 1, max: 1, raw: true });

/**
 * A printed sub-pattern: a sequence of tokens (kept as tokens so that callers can still share its tail), or an
 * alternation, which needs a group before anything is concatenated to it.
 */
export type Printed = { items: Token[]; alternatives?: undefined } | { alternatives: string[] };

export const printedText = (p: Printed): string =>
  p.alternatives === undefined ? sequence(p.items) : p.alternatives.join("|");
export const itemsOf = (p: Printed): Token[] =>
  p.alternatives === undefined ? p.items : [rawText(`(?:${p.alternatives.join("|")})`)];
export const rawToken = (p: Printed): Token => rawText(sequence(itemsOf(p)));

export function printChains(chains: Chain[]): Printed {
  const root = newNode();
  for (const c of chains) insert(root, c);
  return new Printer().node(root);
}

/** A path out of a node down to the next node that branches or ends. */
export interface Alt {
  tokens: Token[];
  rest: TrieNode;
}

/**
 * Prints a trie. Prefixes are shared by construction; in addition, branches that end alike have their common
 * tail pulled out (`\d|[1-9]\d` -> `[1-9]?\d`, `0[1-9]\d*|[1-9]\d*` -> `0?[1-9]\d*`), and a branch that is
 * optional in front of what its siblings already match becomes `(?:x)?rest`. Both rewrites are language
 * identities (the second is applied only when the printed texts are equal), so the matched set stays exact.
 */
export class Printer {
  private readonly memo = new Map<TrieNode, Printed>();

  node(n: TrieNode): Printed {
    let p = this.memo.get(n);
    if (p === undefined) {
      p = this.branch(n.terminal, this.alts(n));
      this.memo.set(n, p);
    }
    return p;
  }

  private alts(n: TrieNode): Alt[] {
    return [...n.edges.values()].map(({ token, node }) => {
      const tokens = [token];
      let rest = node;
      while (!rest.terminal && rest.edges.size === 1) {
        const only = rest.edges.values().next().value as { token: Token; node: TrieNode };
        tokens.push(only.token);
        rest = only.node;
      }
      return { tokens, rest };
    });
  }

  private branch(terminal: boolean, alts: Alt[]): Printed {
    if (alts.length === 0) return { items: [] };
    // x? in front: the node matches rest(x) | x rest(x). Bounded search keeps this polynomial.
    if (terminal && alts.length <= 4) {
      for (let i = 0; i < alts.length; i++) {
        const alt = alts[i] as Alt;
        const rest = this.node(alt.rest);
        const others = this.branch(
          true,
          alts.filter((_, j) => j !== i),
        );
        if (printedText(rest) === printedText(others)) return { items: [optionalToken(alt.tokens), ...itemsOf(rest)] };
      }
    }
    // Group the alternatives by their last token and pull the common tail of each group out.
    const groups = new Map<string, Token[][]>();
    for (const alt of alts) {
      const items = [...alt.tokens, ...itemsOf(this.node(alt.rest))];
      const key = tokenKey(items[items.length - 1] as Token);
      const g = groups.get(key);
      if (g === undefined) groups.set(key, [items]);
      else g.push(items);
    }
    const parts = [...groups.values()].map((members): Token[] => {
      if (members.length === 1) return members[0] as Token[];
      const first = members[0] as Token[];
      const shortest = Math.min(...members.map((m) => m.length));
      let shared = 0;
      while (
        shared < shortest &&
        members.every((m) => tokenKey(m[m.length - 1 - shared] as Token) === tokenKey(first[first.length - 1 - shared] as Token))
      ) {
        shared++;
      }
      // The heads are shorter than the members, so printing them recursively terminates.
      const heads = printChains(members.map((m) => m.slice(0, m.length - shared)));
      return [...itemsOf(heads), ...first.slice(first.length - shared)];
    });
    if (terminal) {
      if (parts.length === 1) return { items: [optionalToken(parts[0] as Token[])] };
      return { items: [rawText(`(?:${parts.map(sequence).join("|")})?`)] };
    }
    if (parts.length === 1) return { items: parts[0] as Token[] };
    return { alternatives: parts.map(sequence) };
  }
}
