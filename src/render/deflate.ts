/**
 * A small optimising deflate (RFC 1951) encoder for user data, where every byte counts and the input is a
 * few KiB. libdeflate's level 12 parses almost optimally but keeps the provision script in one or two
 * Huffman blocks, so the cluster CA's base64 and the shell text share one code; this encoder gives each
 * its own block: an iterated shortest-path parse over all matches (costs from the previous pass's
 * statistics, as zopfli does), then block boundaries chosen at line starts where separate Huffman codes
 * pay for their headers, then each block parsed again with its own statistics.
 * {@link gzipSmallest} inflates the result to check it and keeps libdeflate's output when that is smaller
 * (or the input too big to be worth the time), so a bug here can cost bytes, never correct user data.
 */

const maxMatch = 258;
const window = 32768;
const maxChain = 4096;
/** Above this (user data is capped at 16 KiB by most providers) libdeflate alone: the parse is not worth its time. */
const maxOptimisedInput = 32 * 1024;
const iterations = 8;
const maxBlocks = 16;

const lenBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const lenExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const distBase = [
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385,
  24577,
];
const distExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
/** Order in which the code-length code's lengths are sent (RFC 1951 3.2.7). */
const clOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

const lenSymbolOf = new Uint16Array(maxMatch + 1);
const distSymbolOf = new Uint8Array(window + 1);
for (let s = 0; s < lenBase.length; s++) {
  const end = s + 1 < lenBase.length ? (lenBase[s + 1] ?? 0) : maxMatch + 1;
  for (let l = lenBase[s] ?? 0; l < end; l++) lenSymbolOf[l] = 257 + s;
}
lenSymbolOf[maxMatch] = 285;
for (let s = 0; s < distBase.length; s++) {
  const end = s + 1 < distBase.length ? (distBase[s + 1] ?? 0) : window + 1;
  for (let d = distBase[s] ?? 0; d < end; d++) distSymbolOf[d] = s;
}

/** Length-limited Huffman code lengths (package-merge); at least two symbols get a code, so the code is complete. */
export function codeLengths(freqs: ArrayLike<number>, maxBits: number): number[] {
  const lengths: number[] = new Array<number>(freqs.length).fill(0);
  const leaves: { w: number; syms: number[] }[] = [];
  for (let s = 0; s < freqs.length; s++) if ((freqs[s] ?? 0) > 0) leaves.push({ w: freqs[s] ?? 0, syms: [s] });
  // A lone used symbol still needs a complete code: pair it with an unused one.
  for (let s = 0; leaves.length < 2 && s < freqs.length; s++) if ((freqs[s] ?? 0) === 0) leaves.push({ w: 0, syms: [s] });
  leaves.sort((a, b) => a.w - b.w || (a.syms[0] ?? 0) - (b.syms[0] ?? 0));
  let list = leaves;
  for (let bits = 1; bits < maxBits; bits++) {
    const packages: { w: number; syms: number[] }[] = [];
    for (let i = 0; i + 1 < list.length; i += 2) {
      const a = list[i];
      const b = list[i + 1];
      if (a && b) packages.push({ w: a.w + b.w, syms: a.syms.concat(b.syms) });
    }
    const merged: { w: number; syms: number[] }[] = [];
    let i = 0;
    let j = 0;
    while (i < leaves.length || j < packages.length) {
      const leaf = leaves[i];
      const pkg = packages[j];
      if (leaf && (!pkg || leaf.w <= pkg.w)) {
        merged.push(leaf);
        i++;
      } else if (pkg) {
        merged.push(pkg);
        j++;
      }
    }
    list = merged;
  }
  for (let i = 0; i < 2 * leaves.length - 2; i++) for (const s of list[i]?.syms ?? []) lengths[s] = (lengths[s] ?? 0) + 1;
  return lengths;
}

/** Canonical codes for `lengths`, bit-reversed for deflate's LSB-first bit order. */
function canonicalCodes(lengths: readonly number[]): number[] {
  const count = new Array<number>(16).fill(0);
  for (const l of lengths) if (l > 0) count[l] = (count[l] ?? 0) + 1;
  const next = new Array<number>(16).fill(0);
  let code = 0;
  for (let bits = 1; bits < 16; bits++) {
    code = (code + (count[bits - 1] ?? 0)) << 1;
    next[bits] = code;
  }
  return lengths.map((l) => {
    if (l === 0) return 0;
    const c = next[l] ?? 0;
    next[l] = c + 1;
    let reversed = 0;
    for (let b = 0; b < l; b++) reversed |= ((c >> b) & 1) << (l - 1 - b);
    return reversed;
  });
}

class BitWriter {
  private readonly bytes: number[] = [];
  private buffer = 0;
  private count = 0;
  write(value: number, bits: number): void {
    this.buffer |= value << this.count;
    this.count += bits;
    while (this.count >= 8) {
      this.bytes.push(this.buffer & 0xff);
      this.buffer >>>= 8;
      this.count -= 8;
    }
  }
  finish(): Uint8Array<ArrayBuffer> {
    if (this.count > 0) this.bytes.push(this.buffer & 0xff);
    return Uint8Array.from(this.bytes);
  }
}

/** Tokens of one block: `len[i]` 0 = literal `val[i]`, else a match of `len[i]` bytes at distance `val[i]`. */
interface Tokens {
  readonly len: number[];
  readonly val: number[];
}

interface Histogram {
  readonly lit: number[];
  readonly dist: number[];
  extraBits: number;
}

function histogram(t: Tokens, from = 0, to = t.len.length): Histogram {
  const h: Histogram = { lit: new Array<number>(286).fill(0), dist: new Array<number>(30).fill(0), extraBits: 0 };
  for (let i = from; i < to; i++) addToken(h, t.len[i] ?? 0, t.val[i] ?? 0);
  h.lit[256] = 1;
  return h;
}

function addToken(h: Histogram, len: number, val: number): void {
  if (len === 0) {
    h.lit[val] = (h.lit[val] ?? 0) + 1;
    return;
  }
  const ls = lenSymbolOf[len] ?? 0;
  const ds = distSymbolOf[val] ?? 0;
  h.lit[ls] = (h.lit[ls] ?? 0) + 1;
  h.dist[ds] = (h.dist[ds] ?? 0) + 1;
  h.extraBits += (lenExtra[ls - 257] ?? 0) + (distExtra[ds] ?? 0);
}

/**
 * Code-length sequence of a dynamic block header, run-length coded: [symbol, extra value, extra bits].
 * `use` switches the repeat codes 16 (previous length), 17 (short zero run), 18 (long zero run) on or off.
 */
function runLengths(lengths: readonly number[], use: { r16: boolean; r17: boolean; r18: boolean }): [number, number, number][] {
  const out: [number, number, number][] = [];
  for (let i = 0; i < lengths.length; ) {
    const v = lengths[i] ?? 0;
    let run = 1;
    while (i + run < lengths.length && lengths[i + run] === v) run++;
    i += run;
    if (v === 0) {
      while (use.r18 && run >= 11) {
        const r = Math.min(run, 138);
        out.push([18, r - 11, 7]);
        run -= r;
      }
      while (use.r17 && run >= 3) {
        const r = Math.min(run, 10);
        out.push([17, r - 3, 3]);
        run -= r;
      }
    } else if (use.r16 && run >= 4) {
      out.push([v, 0, 0]);
      run--;
      while (run >= 3) {
        const r = Math.min(run, 6);
        out.push([16, r - 3, 2]);
        run -= r;
      }
    }
    for (; run > 0; run--) out.push([v, 0, 0]);
  }
  return out;
}

/**
 * Counts evened out over stretches of similar values (brotli's and zopfli's "optimise for RLE"), so that
 * the code lengths form runs the block header codes cheaply. Used symbols keep a count of at least 1.
 */
function smoothForRunLengths(counts: readonly number[]): number[] {
  const c = [...counts];
  let length = c.length;
  while (length > 0 && c[length - 1] === 0) length--;
  if (length === 0) return c;
  const good = new Array<boolean>(length).fill(false);
  let symbol = c[0] ?? 0;
  let stride = 0;
  for (let i = 0; i <= length; i++) {
    if (i === length || c[i] !== symbol) {
      if ((symbol === 0 && stride >= 5) || (symbol !== 0 && stride >= 7)) for (let k = 0; k < stride; k++) good[i - k - 1] = true;
      stride = 1;
      if (i !== length) symbol = c[i] ?? 0;
    } else stride++;
  }
  stride = 0;
  let limit = c[0] ?? 0;
  let sum = 0;
  for (let i = 0; i <= length; i++) {
    if (i === length || good[i] || Math.abs((c[i] ?? 0) - limit) >= 4) {
      if (stride >= 4 || (stride >= 3 && sum === 0)) {
        const count = sum === 0 ? 0 : Math.max(1, Math.floor((sum + Math.floor(stride / 2)) / stride));
        for (let k = 0; k < stride; k++) c[i - k - 1] = count;
      }
      stride = 0;
      sum = 0;
      if (i < length - 3) limit = Math.floor(((c[i] ?? 0) + (c[i + 1] ?? 0) + (c[i + 2] ?? 0) + (c[i + 3] ?? 0) + 2) / 4);
      else limit = i < length ? (c[i] ?? 0) : 0;
    }
    stride++;
    if (i !== length) sum += c[i] ?? 0;
  }
  return c;
}

interface BlockPlan {
  readonly lit: number[];
  readonly dist: number[];
  readonly hlit: number;
  readonly hdist: number;
  readonly hclen: number;
  readonly cl: number[];
  readonly rle: [number, number, number][];
  readonly bits: number;
}

const repeatChoices = [0, 1, 2, 3, 4, 5, 6, 7].map((k) => ({ r16: (k & 1) !== 0, r17: (k & 2) !== 0, r18: (k & 4) !== 0 }));

/** The header and data of one dynamic block with the given code lengths, and its size in bits. */
function planWith(h: Histogram, lit: number[], dist: number[], quick = false): BlockPlan {
  let hlit = 286;
  while (hlit > 257 && lit[hlit - 1] === 0) hlit--;
  let hdist = 30;
  while (hdist > 1 && dist[hdist - 1] === 0) hdist--;
  let data = h.extraBits;
  for (let s = 0; s < 286; s++) data += (h.lit[s] ?? 0) * (lit[s] ?? 0);
  for (let s = 0; s < 30; s++) data += (h.dist[s] ?? 0) * (dist[s] ?? 0);
  const lengths = [...lit.slice(0, hlit), ...dist.slice(0, hdist)];
  let best: BlockPlan | undefined;
  for (const use of quick ? repeatChoices.slice(-1) : repeatChoices) {
    const rle = runLengths(lengths, use);
    const clFreq = new Array<number>(19).fill(0);
    for (const [s] of rle) clFreq[s] = (clFreq[s] ?? 0) + 1;
    const cl = codeLengths(clFreq, 7);
    let hclen = 19;
    while (hclen > 4 && cl[clOrder[hclen - 1] ?? 0] === 0) hclen--;
    let bits = 3 + 14 + 3 * hclen + data;
    for (const [s, , extra] of rle) bits += (cl[s] ?? 0) + extra;
    if (!best || bits < best.bits) best = { lit, dist, hlit, hdist, hclen, cl, rle, bits };
  }
  if (!best) throw new Error("deflate: no block plan");
  return best;
}

/**
 * Huffman codes and header of one dynamic block for `h`: plain or RLE-smoothed code lengths, the smaller
 * (`quick`: plain only, with every repeat code; for estimates).
 */
function planBlock(h: Histogram, quick = false): BlockPlan {
  const plain = planWith(h, codeLengths(h.lit, 15), codeLengths(h.dist, 15), quick);
  if (quick) return plain;
  const smooth = planWith(h, codeLengths(smoothForRunLengths(h.lit), 15), codeLengths(smoothForRunLengths(h.dist), 15));
  return smooth.bits < plain.bits ? smooth : plain;
}

function writeBlock(w: BitWriter, t: Tokens, last: boolean): void {
  const p = planBlock(histogram(t));
  w.write(last ? 1 : 0, 1);
  w.write(2, 2); // dynamic Huffman codes
  w.write(p.hlit - 257, 5);
  w.write(p.hdist - 1, 5);
  w.write(p.hclen - 4, 4);
  for (let i = 0; i < p.hclen; i++) w.write(p.cl[clOrder[i] ?? 0] ?? 0, 3);
  const clCodes = canonicalCodes(p.cl);
  for (const [s, value, extra] of p.rle) {
    w.write(clCodes[s] ?? 0, p.cl[s] ?? 0);
    if (extra > 0) w.write(value, extra);
  }
  const litCodes = canonicalCodes(p.lit);
  const distCodes = canonicalCodes(p.dist);
  for (let i = 0; i < t.len.length; i++) {
    const len = t.len[i] ?? 0;
    const val = t.val[i] ?? 0;
    if (len === 0) {
      w.write(litCodes[val] ?? 0, p.lit[val] ?? 0);
      continue;
    }
    const ls = lenSymbolOf[len] ?? 0;
    w.write(litCodes[ls] ?? 0, p.lit[ls] ?? 0);
    const le = lenExtra[ls - 257] ?? 0;
    if (le > 0) w.write(len - (lenBase[ls - 257] ?? 0), le);
    const ds = distSymbolOf[val] ?? 0;
    w.write(distCodes[ds] ?? 0, p.dist[ds] ?? 0);
    const de = distExtra[ds] ?? 0;
    if (de > 0) w.write(val - (distBase[ds] ?? 0), de);
  }
  w.write(litCodes[256] ?? 0, p.lit[256] ?? 0);
}

/**
 * Every useful match at every position: for position p, pairs (length, distance) with increasing length,
 * each the closest distance reaching that length (lengths between two pairs use the later pair's distance).
 */
interface Matches {
  readonly start: Int32Array;
  readonly len: number[];
  readonly dist: number[];
}

function findMatches(data: Uint8Array): Matches {
  const n = data.length;
  const head = new Int32Array(1 << 16).fill(-1);
  const prev = new Int32Array(n).fill(-1);
  const start = new Int32Array(n + 1);
  const len: number[] = [];
  const dist: number[] = [];
  for (let p = 0; p < n; p++) {
    start[p] = len.length;
    if (p + 3 > n) continue;
    const h = (((data[p] ?? 0) << 8) ^ ((data[p + 1] ?? 0) << 4) ^ (data[p + 2] ?? 0) ^ ((data[p + 2] ?? 0) << 12)) & 0xffff;
    const limit = Math.min(maxMatch, n - p);
    let best = 2;
    for (let q = head[h] ?? -1, chain = 0; q >= 0 && p - q <= window && chain < maxChain; q = prev[q] ?? -1, chain++) {
      if (data[q + best] !== data[p + best]) continue;
      let l = 0;
      while (l < limit && data[q + l] === data[p + l]) l++;
      if (l > best) {
        len.push(l);
        dist.push(p - q);
        best = l;
        if (l === limit) break;
      }
    }
    prev[p] = head[h] ?? -1;
    head[h] = p;
  }
  start[n] = len.length;
  return { start, len, dist };
}

/** Bit costs of symbols for the parser: from a histogram (entropy, unseen symbols dear) or deflate's fixed code. */
interface Costs {
  readonly lit: Float64Array;
  readonly len: Float64Array;
  readonly dist: Float64Array;
}

function costsFrom(h: Histogram | undefined): Costs {
  const symbolCost = (freqs: readonly number[] | undefined, s: number, fixed: number): number => {
    if (!freqs) return fixed;
    let total = 0;
    for (const f of freqs) total += f;
    const f = freqs[s] ?? 0;
    return f > 0 ? Math.log2(total / f) : Math.log2(Math.max(total, 1) * 2) + 1;
  };
  const lit = new Float64Array(256);
  for (let c = 0; c < 256; c++) lit[c] = symbolCost(h?.lit, c, c < 144 ? 8 : 9);
  const len = new Float64Array(maxMatch + 1);
  for (let l = 3; l <= maxMatch; l++) {
    const s = lenSymbolOf[l] ?? 0;
    len[l] = symbolCost(h?.lit, s, s < 280 ? 7 : 8) + (lenExtra[s - 257] ?? 0);
  }
  const dist = new Float64Array(30);
  for (let s = 0; s < 30; s++) dist[s] = symbolCost(h?.dist, s, 5) + (distExtra[s] ?? 0);
  return { lit, len, dist };
}

/** Cheapest token sequence for data[from, to) under `costs` (matches may reach back before `from`). */
function parse(data: Uint8Array, m: Matches, from: number, to: number, costs: Costs): Tokens {
  const n = to - from;
  const cost = new Float64Array(n + 1).fill(Number.POSITIVE_INFINITY);
  const stepLen = new Int32Array(n + 1);
  const stepVal = new Int32Array(n + 1);
  cost[0] = 0;
  for (let i = 0; i < n; i++) {
    const c = cost[i] ?? 0;
    const p = from + i;
    const lit = c + (costs.lit[data[p] ?? 0] ?? 0);
    if (lit < (cost[i + 1] ?? 0)) {
      cost[i + 1] = lit;
      stepLen[i + 1] = 0;
      stepVal[i + 1] = data[p] ?? 0;
    }
    let shorter = 2;
    for (let k = m.start[p] ?? 0; k < (m.start[p + 1] ?? 0); k++) {
      const l = Math.min(m.len[k] ?? 0, n - i);
      const d = m.dist[k] ?? 0;
      const dc = c + (costs.dist[distSymbolOf[d] ?? 0] ?? 0);
      for (let len = shorter + 1; len <= l; len++) {
        const cc = dc + (costs.len[len] ?? 0);
        if (cc < (cost[i + len] ?? 0)) {
          cost[i + len] = cc;
          stepLen[i + len] = len;
          stepVal[i + len] = d;
        }
      }
      shorter = Math.max(shorter, l);
    }
  }
  const len: number[] = [];
  const val: number[] = [];
  for (let i = n; i > 0; ) {
    const l = stepLen[i] ?? 0;
    len.push(l);
    val.push(stepVal[i] ?? 0);
    i -= l === 0 ? 1 : l;
  }
  return { len: len.reverse(), val: val.reverse() };
}

/** Iterated parse of one block: each pass costs symbols by the previous pass's statistics; the smallest wins. */
function optimiseBlock(data: Uint8Array, m: Matches, from: number, to: number, seed?: Histogram): { tokens: Tokens; bits: number } {
  let best: { tokens: Tokens; bits: number } | undefined;
  let h = seed;
  for (let i = 0; i < iterations; i++) {
    const tokens = parse(data, m, from, to, costsFrom(h));
    h = histogram(tokens);
    const bits = planBlock(h).bits;
    if (!best || bits < best.bits) best = { tokens, bits };
  }
  return best ?? { tokens: { len: [], val: [] }, bits: 0 };
}

/**
 * Block boundaries (byte offsets, ending with data.length) for a token stream: recursively the line start
 * that saves the most bits when the stream is coded as two blocks instead of one, while that saves any.
 */
function splitPoints(data: Uint8Array, tokens: Tokens): number[] {
  // Candidate cuts: tokens starting a line; cumulative histograms at each.
  const cuts: { token: number; offset: number }[] = [{ token: 0, offset: 0 }];
  for (let i = 0, p = 0; i < tokens.len.length; i++) {
    if (i > 0 && data[p - 1] === 0x0a) cuts.push({ token: i, offset: p });
    const l = tokens.len[i] ?? 0;
    p += l === 0 ? 1 : l;
  }
  cuts.push({ token: tokens.len.length, offset: data.length });
  // Histogram of the tokens before each cut: a block's histogram is the difference of two.
  const before: Histogram[] = [];
  let last = 0;
  let running = histogram(tokens, 0, 0);
  for (const c of cuts) {
    const h = histogram(tokens, last, c.token);
    running = {
      lit: running.lit.map((f, s) => f + (h.lit[s] ?? 0) - (s === 256 ? 1 : 0)),
      dist: running.dist.map((f, s) => f + (h.dist[s] ?? 0)),
      extraBits: running.extraBits + h.extraBits,
    };
    before.push(running);
    last = c.token;
  }
  const cost = (a: number, b: number): number => {
    const from = before[a];
    const to = before[b];
    if (!from || !to) return 0;
    const h: Histogram = {
      lit: to.lit.map((f, s) => f - (from.lit[s] ?? 0)),
      dist: to.dist.map((f, s) => f - (from.dist[s] ?? 0)),
      extraBits: to.extraBits - from.extraBits,
    };
    h.lit[256] = 1;
    return planBlock(h, true).bits;
  };
  const chosen = new Set<number>([0, cuts.length - 1]);
  const split = (a: number, b: number): void => {
    if (chosen.size >= maxBlocks + 1 || b - a < 2) return;
    const whole = cost(a, b);
    let bestAt = -1;
    let bestBits = whole;
    for (let k = a + 1; k < b; k++) {
      const bits = cost(a, k) + cost(k, b);
      if (bits < bestBits) {
        bestBits = bits;
        bestAt = k;
      }
    }
    if (bestAt < 0) return;
    chosen.add(bestAt);
    split(a, bestAt);
    split(bestAt, b);
  };
  split(0, cuts.length - 1);
  return [...chosen]
    .sort((x, y) => x - y)
    .slice(1)
    .map((k) => cuts[k]?.offset ?? data.length);
}

/** Raw deflate of `data`: optimised parse, blocks split where separate codes pay. */
export function deflateRawOptimised(data: Uint8Array): Uint8Array<ArrayBuffer> {
  const m = findMatches(data);
  const whole = optimiseBlock(data, m, 0, data.length);
  let from = 0;
  const blocks = splitPoints(data, whole.tokens).map((to) => {
    const block = optimiseBlock(data, m, from, to);
    from = to;
    return block;
  });
  const chosen = blocks.reduce((sum, b) => sum + b.bits, 0) < whole.bits ? blocks : [whole];
  const w = new BitWriter();
  for (const [i, block] of chosen.entries()) writeBlock(w, block.tokens, i === chosen.length - 1);
  return w.finish();
}

/** gzip member (RFC 1952) around a raw deflate stream: no name, no mtime, XFL 2 (slowest), OS 3 (Unix). */
function gzipWrap(raw: Uint8Array, data: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(10 + raw.length + 8);
  out.set([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 3]);
  out.set(raw, 10);
  const view = new DataView(out.buffer);
  view.setUint32(10 + raw.length, Bun.hash.crc32(data) >>> 0, true);
  view.setUint32(14 + raw.length, data.length >>> 0, true);
  return out;
}

/**
 * The smallest gzip of `data` this renderer can make: libdeflate level 12, or {@link deflateRawOptimised}
 * when that is smaller and inflates back to `data` exactly. The header carries no flags (FLG 0).
 */
export function gzipSmallest(data: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const fallback = Bun.gzipSync(data, { level: 12, library: "libdeflate" });
  if (data.length > maxOptimisedInput) return fallback;
  const own = gzipWrap(deflateRawOptimised(data), data);
  if (own.length >= fallback.length) return fallback;
  let back: Uint8Array;
  try {
    back = Bun.gunzipSync(own);
  } catch {
    return fallback;
  }
  return Buffer.from(back).equals(Buffer.from(data)) ? own : fallback;
}
