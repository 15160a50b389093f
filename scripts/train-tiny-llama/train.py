#!/usr/bin/python3
"""Train a tiny llama-architecture language model on the Debian fortune corpus.

Everything the model needs comes from Debian packages (python3-torch for
training, fortunes-min and fortunes for the text); nothing is downloaded.

The script
  1. reads the plain-text fortune files (not the .dat indexes),
  2. learns a SentencePiece-style "llama" vocabulary: <unk>, <s>, </s>, the
     256 byte-fallback tokens <0x00>..<0xFF>, the frequent characters, and
     pieces learned by BPE-style merges (a piece's score is minus its merge
     rank, so score-ordered SPM merging finds them),
  3. encodes the corpus exactly as llama.cpp's (and weft's) SPM tokenizer
     does: a space prefix, spaces as U+2581, the adjacent pair whose union is
     the highest-scoring token merged first (leftmost on ties), leftovers as
     byte tokens,
  4. trains a llama model (RMSNorm, RoPE on adjacent pairs, SwiGLU, no
     biases, untied classifier) with AdamW and a cosine schedule on a wall-
     clock budget,
  5. saves every tensor as a float32 .npy named as in GGUF, the vocabulary
     and config as JSON, and two test fixtures (tokenizations and a greedy
     continuation) for the Go tests in examples/tinyllama.

The export to GGUF is done by weft's own writer: see export/main.go.

Usage:
  python3 train.py --out /tmp/tinyllama [--minutes 20] [--threads 2]
"""

import argparse
import collections
import heapq
import json
import math
import os
import random
import re
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SPACE = "\u2581"
FORTUNE_DIR = "/usr/share/games/fortunes"
# Plain-text fortune databases shipped by fortunes-min (fortune-mod's BSD
# licensed data) and fortunes (the rest of fortune-mod's data, same
# licence). The offensive ones (off/) are not used.
SKIP_SUFFIXES = (".dat", ".u8", ".pdat")


# ---------------------------------------------------------------- corpus

def read_corpus(directory):
    docs, files = [], []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if not os.path.isfile(path) or name.endswith(SKIP_SUFFIXES):
            continue
        raw = open(path, "rb").read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        files.append(name)
        for doc in text.split("\n%\n"):
            doc = doc.strip("%\n").rstrip()
            doc = "\n".join(line.rstrip() for line in doc.split("\n"))
            # Backspace overstrikes and other control characters make poor
            # training text.
            if not doc or any(ord(c) < 32 and c not in "\n\t" for c in doc):
                continue
            docs.append(doc)
    return files, docs


# ------------------------------------------------------------ tokenizer

SEGMENT = re.compile("\n|" + SPACE + "[^" + SPACE + "\n]*|[^" + SPACE + "\n]+")


def segments(text):
    """Splits SPM input (space prefix added, spaces as ▁) into the pieces no
    learned token crosses: newlines, and words that start with ▁."""
    return SEGMENT.findall(SPACE + text.replace(" ", SPACE))


def learn_vocab(docs, size, min_char=100):
    chars = collections.Counter()
    words = collections.Counter()
    for d in docs:
        for s in segments(d):
            words[s] += 1
            chars.update(s)
    base = sorted(c for c, n in chars.items() if n >= min_char and c not in "\n\t\r")
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    types = [2, 3, 3] + [6] * 256
    scores = [0.0] * len(tokens)
    for c in base:
        tokens.append(c)
        types.append(1)
        scores.append(-1e9)  # a single character is never a merge result
    known = set(tokens)
    baseset = set(base)
    # BPE over word types: each word a list of symbols; pairs with a
    # character outside the base set never merge.
    wlist = [[list(w), n] for w, n in words.items()]
    pairs = collections.Counter()
    where = collections.defaultdict(set)
    for i, (syms, n) in enumerate(wlist):
        for a, b in zip(syms, syms[1:]):
            if a[-1] in baseset and b[0] in baseset and (a in known and b in known):
                pairs[(a, b)] += n
                where[(a, b)].add(i)
    rank = 0
    while len(tokens) < size and pairs:
        (a, b), n = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        if n < 2:
            break
        merged = a + b
        rank += 1
        if merged not in known:
            tokens.append(merged)
            types.append(1)
            scores.append(-float(rank))
            known.add(merged)
        for i in list(where[(a, b)]):
            syms, cnt = wlist[i]
            for x, y in zip(syms, syms[1:]):
                if (x, y) in pairs:
                    pairs[(x, y)] -= cnt
                    if pairs[(x, y)] <= 0:
                        del pairs[(x, y)]
                    where[(x, y)].discard(i)
            out, j = [], 0
            while j < len(syms):
                if j + 1 < len(syms) and syms[j] == a and syms[j + 1] == b:
                    out.append(merged)
                    j += 2
                else:
                    out.append(syms[j])
                    j += 1
            wlist[i][0] = out
            for x, y in zip(out, out[1:]):
                if x in known and y in known:
                    pairs[(x, y)] += cnt
                    where[(x, y)].add(i)
        pairs.pop((a, b), None)
        where.pop((a, b), None)
    return tokens, scores, types


class SPM:
    """llama.cpp's SPM tokenizer ("llama" model), the same algorithm as
    weft's tokenizer package: symbols are characters; the adjacent pair whose
    concatenation is the highest-scoring token merges first (leftmost on a
    tie); a final symbol that is no token becomes its UTF-8 byte tokens."""

    def __init__(self, tokens, scores):
        self.ids = {t: i for i, t in enumerate(tokens)}
        self.scores = scores
        self.tokens = tokens
        self.cache = {}

    def word(self, w):
        got = self.cache.get(w)
        if got is not None:
            return got
        syms = [[c, i - 1, i + 1] for i, c in enumerate(w)]  # text, prev, next
        if syms:
            syms[-1][2] = -1
        q = []

        def push(l, r):
            if l < 0 or r < 0:
                return
            m = syms[l][0] + syms[r][0]
            i = self.ids.get(m)
            if i is not None:
                heapq.heappush(q, (-self.scores[i], l, r, len(m)))

        for i in range(1, len(syms)):
            push(i - 1, i)
        while q:
            _, l, r, size = heapq.heappop(q)
            L, R = syms[l], syms[r]
            if not L[0] or not R[0] or len(L[0]) + len(R[0]) != size or L[2] != r:
                continue
            L[0] += R[0]
            R[0] = ""
            L[2] = R[2]
            if R[2] >= 0:
                syms[R[2]][1] = l
            push(L[1], l)
            push(l, L[2])
        out = []
        for s in syms:
            if not s[0]:
                continue
            i = self.ids.get(s[0])
            if i is not None:
                out.append(i)
            else:
                out.extend(self.ids["<0x%02X>" % b] for b in s[0].encode("utf-8"))
        self.cache[w] = out
        return out

    def encode(self, text, bos=True):
        ids = [1] if bos else []
        for s in segments(text):
            ids.extend(self.word(s))
        return ids

    def decode(self, ids, context=()):
        """Decodes ids; with context (the ids before them) only the text
        the ids add is returned."""
        if context:
            return self.decode(list(context) + list(ids))[len(self.decode(context)):]
        out = bytearray()
        for i in ids:
            t = self.tokens[i]
            if i < 3:
                continue
            if re.fullmatch(r"<0x[0-9A-F]{2}>", t):
                out.append(int(t[3:5], 16))
            else:
                out.extend(t.replace(SPACE, " ").encode("utf-8"))
        s = out.decode("utf-8", errors="replace")
        return s[1:] if s.startswith(" ") else s


# ---------------------------------------------------------------- model

class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x, cos, sin):
    # x [B, H, T, hd]; rotates adjacent pairs (2i, 2i+1) as ggml's "normal"
    # RoPE for arch llama.
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, hd = c["dim"], c["dim"] // c["heads"]
        self.h, self.kvh, self.hd = c["heads"], c["kv_heads"], hd
        self.drop = nn.Dropout(c.get("dropout", 0.0))
        self.attn_norm = RMSNorm(d, c["eps"])
        self.wq = nn.Linear(d, c["heads"] * hd, bias=False)
        self.wk = nn.Linear(d, c["kv_heads"] * hd, bias=False)
        self.wv = nn.Linear(d, c["kv_heads"] * hd, bias=False)
        self.wo = nn.Linear(c["heads"] * hd, d, bias=False)
        self.ffn_norm = RMSNorm(d, c["eps"])
        mask = torch.ones(c["ctx"], c["ctx"], dtype=torch.bool).triu(1)
        self.register_buffer("mask", mask, persistent=False)
        self.w1 = nn.Linear(d, c["ffn"], bias=False)  # gate
        self.w3 = nn.Linear(d, c["ffn"], bias=False)  # up
        self.w2 = nn.Linear(c["ffn"], d, bias=False)  # down

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        h = self.attn_norm(x)
        q = self.wq(h).view(B, T, self.h, self.hd).transpose(1, 2)
        k = self.wk(h).view(B, T, self.kvh, self.hd).transpose(1, 2)
        v = self.wv(h).view(B, T, self.kvh, self.hd).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        if self.kvh != self.h:
            k = k.repeat_interleave(self.h // self.kvh, dim=1)
            v = v.repeat_interleave(self.h // self.kvh, dim=1)
        # Causal softmax attention, written out (torch 1.13 in Debian 12
        # has no scaled_dot_product_attention).
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.hd))
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))
        a = att.softmax(-1) @ v
        x = x + self.drop(self.wo(a.transpose(1, 2).reshape(B, T, -1)))
        h = self.ffn_norm(x)
        return x + self.drop(self.w2(F.silu(self.w1(h)) * self.w3(h)))


class Llama(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c["vocab"], c["dim"])
        self.blocks = nn.ModuleList(Block(c) for _ in range(c["layers"]))
        self.norm = RMSNorm(c["dim"], c["eps"])
        self.out = nn.Linear(c["dim"], c["vocab"], bias=False)
        hd = c["dim"] // c["heads"]
        inv = c["rope_theta"] ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
        ang = torch.arange(c["ctx"], dtype=torch.float64)[:, None] * inv[None, :]
        self.register_buffer("cos", ang.cos().float(), persistent=False)
        self.register_buffer("sin", ang.sin().float(), persistent=False)
        for n, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02
                if n.endswith("wo.weight") or n.endswith("w2.weight"):
                    std = 0.02 / math.sqrt(2 * c["layers"])
                nn.init.normal_(p, 0.0, std)

    def forward(self, idx):
        T = idx.shape[1]
        x = self.embed(idx)
        cos, sin = self.cos[:T], self.sin[:T]
        for b in self.blocks:
            x = b(x, cos, sin)
        return self.out(self.norm(x))

    def gguf_tensors(self):
        t = {"token_embd.weight": self.embed.weight}
        for i, b in enumerate(self.blocks):
            p = "blk.%d." % i
            t.update({
                p + "attn_norm.weight": b.attn_norm.weight,
                p + "attn_q.weight": b.wq.weight,  # [out, in]
                p + "attn_k.weight": b.wk.weight,
                p + "attn_v.weight": b.wv.weight,
                p + "attn_output.weight": b.wo.weight,
                p + "ffn_norm.weight": b.ffn_norm.weight,
                p + "ffn_gate.weight": b.w1.weight,
                p + "ffn_up.weight": b.w3.weight,
                p + "ffn_down.weight": b.w2.weight,
            })
        t["output_norm.weight"] = self.norm.weight
        t["output.weight"] = self.out.weight
        return t


@torch.no_grad()
def greedy(model, ids, n):
    ids = list(ids)
    out = []
    for _ in range(n):
        x = torch.tensor([ids[-model.c["ctx"]:]])
        nxt = int(model(x)[0, -1].argmax())
        out.append(nxt)
        ids.append(nxt)
    return out


def batch(data, ctx, bs, g=None):
    ix = torch.randint(0, len(data) - ctx - 1, (bs,), generator=g).to(data.device)
    pos = ix[:, None] + torch.arange(ctx, device=data.device)[None, :]
    return data[pos], data[pos + 1]


@torch.no_grad()
def evaluate(model, data, ctx, batches=8, bs=16):
    model.eval()
    g = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(batches):
        x, y = batch(data, ctx, bs, g)
        losses.append(F.cross_entropy(model(x).flatten(0, 1), y.flatten()).item())
    model.train()
    return sum(losses) / len(losses)


# ----------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--fortunes", default=FORTUNE_DIR)
    ap.add_argument("--minutes", type=float, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=1024)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=384)
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--max-steps", type=int, default=0, help="0: train for --minutes")
    ap.add_argument("--eval-every", type=int, default=200)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--reuse", metavar="DIR",
                    help="skip training: load DIR/model.json and DIR/weights (a previous run) "
                         "and only write the fixtures, computed with this torch on the CPU")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--prompt", default="The meaning of life is")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    random.seed(a.seed)
    os.makedirs(os.path.join(a.out, "weights"), exist_ok=True)

    t0 = time.time()
    files, docs = read_corpus(a.fortunes)
    print("corpus: %d files, %d fortunes, %d chars" % (len(files), len(docs), sum(map(len, docs))))
    tokens, scores, types = learn_vocab(docs, a.vocab)
    print("vocab: %d tokens (%.1fs)" % (len(tokens), time.time() - t0))
    spm = SPM(tokens, scores)
    random.shuffle(docs)
    nval = max(1, len(docs) // 50)
    enc = lambda ds: torch.tensor([i for d in ds for i in spm.encode(d) + [2]], dtype=torch.long)
    val, train = enc(docs[:nval]), enc(docs[nval:])
    print("tokens: train %d, val %d (%.2f chars/token) (%.1fs)" % (
        len(train), len(val), sum(map(len, docs[nval:])) / len(train), time.time() - t0))

    if a.reuse:
        if json.load(open(os.path.join(a.reuse, "model.json")))["tokens"] != tokens:
            raise SystemExit("train.py: %s was trained with another vocabulary" % a.reuse)
        fixtures(a, spm, load(a.reuse))
        return
    c = dict(vocab=len(tokens), dim=a.dim, layers=a.layers, heads=a.heads, kv_heads=a.kv_heads,
             ffn=a.ffn, ctx=a.ctx, eps=1e-5, rope_theta=10000.0)
    model = Llama(dict(c, dropout=a.dropout)).to(a.device)
    train, val = train.to(a.device), val.to(a.device)
    nparams = sum(p.numel() for p in model.parameters())
    print("model:", c, "params:", nparams)
    decay = [p for p in model.parameters() if p.dim() == 2]
    nodecay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": nodecay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95))
    budget = a.minutes * 60
    start = time.time()
    step, warm = 0, 30
    best, best_state = float("inf"), None
    while True:
        frac = (time.time() - start) / budget
        if a.max_steps:
            frac = max(frac, step / a.max_steps)
        if frac >= 1:
            break
        lr = a.lr * min(1, (step + 1) / warm) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = batch(train, a.ctx, a.batch)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        if step % a.eval_every == 0:
            v = evaluate(model, val, a.ctx)
            print("step %d  %.0fs  lr %.2e  loss %.3f  val %.3f" % (
                step, time.time() - start, lr, loss.item(), v), flush=True)
            if v < best:
                best = v
                best_state = {k: t.detach().cpu().clone() for k, t in model.state_dict().items()}
    # Keep the checkpoint with the lowest validation loss; export and the
    # fixtures are computed in float32 on the CPU.
    model = model.cpu()
    train, val = train.cpu(), val.cpu()
    if best_state is not None and evaluate(model, val, a.ctx) > best:
        model.load_state_dict(best_state)
    model.eval()
    train_loss, val_loss = evaluate(model, train, a.ctx), evaluate(model, val, a.ctx)
    elapsed = time.time() - start
    print("done: %d steps, %.0fs, train loss %.3f, val loss %.3f" % (step, elapsed, train_loss, val_loss))

    model.eval()
    for name, p in model.gguf_tensors().items():
        np.save(os.path.join(a.out, "weights", name + ".npy"), p.detach().float().numpy())
    meta = dict(config=c, params=nparams, steps=step, train_seconds=round(elapsed),
                train_loss=round(train_loss, 4), val_loss=round(val_loss, 4),
                corpus_files=files, tokens=tokens, scores=scores, token_type=types)
    json.dump(meta, open(os.path.join(a.out, "model.json"), "w"))

    fixtures(a, spm, model)


def load(directory):
    """Rebuilds a trained model from train.py's output directory."""
    meta = json.load(open(os.path.join(directory, "model.json")))
    model = Llama(meta["config"])
    params = dict(model.named_parameters())
    names = dict(zip(model.gguf_tensors().keys(), (n for n, _ in model.named_parameters())))
    with torch.no_grad():
        for gname, pname in names.items():
            arr = np.load(os.path.join(directory, "weights", gname + ".npy"))
            params[pname].copy_(torch.from_numpy(arr))
    return model.eval()


def dump(obj, path):
    """Writes a fixture as indented JSON with each id list on one line."""
    s = json.dumps(obj, ensure_ascii=False, indent=1)
    s = re.sub(r"\[\s+([\d,\s]+?)\s+\]",
               lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", s)
    with open(path, "w") as f:
        f.write(s + "\n")


def fixtures(a, spm, model):
    lines = ["Q: How many programmers does it take to change a light bulb?",
             "You will be successful in your work.",
             "  Indented\ttext, café & naïve\nsecond line"]
    dump({"cases": [{"text": s, "ids": spm.encode(s)} for s in lines]},
         os.path.join(a.out, "tokenize.json"))
    prompt = spm.encode(a.prompt)
    gen = greedy(model, prompt, 32)
    print("prompt:", a.prompt)
    print("greedy:", repr(spm.decode(gen, prompt)))
    dump({"prompt": a.prompt, "prompt_ids": prompt, "greedy_ids": gen,
          "greedy_text": spm.decode(gen, prompt)},
         os.path.join(a.out, "greedy.json"))
    for p in ["Q:", "A fool", "You will"]:
        ids = spm.encode(p)
        print("sample %r -> %r" % (p, p + spm.decode(greedy(model, ids, 40), ids)))


if __name__ == "__main__":
    main()
