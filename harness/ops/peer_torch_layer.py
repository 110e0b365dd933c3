#!/usr/bin/env python3
# harness/ops/peer_torch_layer.py -- experiment 09's layer in PyTorch (make
# peer-torch-layer; harness/ops/peer-torch-layer.sh installs torch and
# calls it). FP32 on the CPU, eager and torch.compile; for each, the layer's
# median time and the share of its profiled CPU self time per class of step.
"""Experiment 09's transformer layer in PyTorch, FP32 on the CPU.

Configurations, written op by op as Hugging Face writes them (eval: no
dropout; weights drawn once, std 0.02, seed 0):
  bert   BertLayer, post-LN: qkv = x W^T + b (one fused QKV linear), scores
         = q k^T / sqrt(64) + mask (additive -10000 on the last S/8 keys),
         softmax, context = p v, output linear + bias, + x, LayerNorm, FFN1 +
         bias, GELU (tanh form), FFN2 + bias, + residual, LayerNorm (eps 1e-12)
  llama  LlamaDecoderLayer, pre-norm: RMSNorm (eps 1e-5, as LlamaRMSNorm:
         pow, mean, rsqrt, mul), q/k/v linears (32 and 8 heads of 64), RoPE
         (theta 500000, rotate_half), K and V repeated to 32 heads, scores *
         1/8 + causal mask, softmax, context, output linear, + x, RMSNorm,
         SwiGLU FFN (8192), + residual; no biases. RoPE's cos and sin and the
         causal mask are made once, outside the layer, as a model makes them
         once for all its layers.

Classes of the profiled CPU self time (Ivanov et al.'s three, by op name):
  contraction    mm, addmm, bmm, matmul, linear, baddbmm, addbmm, einsum,
                 dot, mv, *scaled_dot_product* (and any op named *mm*)
  normalization  softmax, _softmax, log_softmax, layer_norm,
                 native_layer_norm, rms_norm, _fused_rms_norm, group_norm,
                 batch_norm; and every op inside a normalization step
                 written as several ops: the manual RMSNorm's pow, mean,
                 add, rsqrt and muls are profiled inside a "norm:rms_norm"
                 scope (eager) and count as normalization, as experiment
                 09's rmsnorm step does
  element-wise   every other aten op: add, mul, div, gelu, silu,
                 masked_fill, neg and cat (RoPE), pow, rsqrt, mean...; among
                 them "data movement": copy_, clone, contiguous, _to_copy,
                 cat, stack, transpose, t, permute, view, reshape, expand,
                 slice, select, unsqueeze, split... (listed under
                 element-wise, and again as its own share)
  other          what is no aten op: the Python between ops, the compiled
                 region's own time, the profiler's scopes
An op whose own name has no class (a view, say) inside one that has (a
linear's transpose) takes its parent's class; data movement keeps its own.
Under torch.compile the fused C++ kernels are profiled by name
(cpp_fused_<ops>_N): one that fuses a softmax, a layer_norm or an rsqrt is
normalization, one of copies only is data movement, any other element-wise;
the GEMMs stay aten::mm/addmm/bmm calls. Where inductor recognizes the
attention (scores, scale, mask, softmax, context) it calls one fused op,
aten::_scaled_dot_product_flash_attention_for_cpu: a contraction, softmax
included, as experiment 09 classes its own fused attention step. In eager,
a linear's bias is added inside its GEMM (aten::addmm): a contraction too.
"""
import argparse
import contextlib
import csv
import datetime
import math
import os
import platform
import statistics
import sys
import tempfile
import time

CONFIGS = ("bert", "llama")
MODES = ("eager", "compile")
CLASSES = ("contraction", "normalization", "elementwise", "other")
PROFILED = 3

CONTRACTION = {"mm", "addmm", "bmm", "matmul", "linear", "baddbmm", "addbmm", "einsum", "dot",
               "mv", "_addmm_activation", "_mkl_linear", "mkldnn_linear"}
NORMALIZATION = {"softmax", "_softmax", "log_softmax", "_log_softmax", "layer_norm",
                 "native_layer_norm", "rms_norm", "_fused_rms_norm", "group_norm",
                 "native_group_norm", "batch_norm", "native_batch_norm"}
DATA_MOVEMENT = {"copy_", "clone", "contiguous", "_to_copy", "to", "cat", "stack", "transpose",
                 "t", "permute", "view", "reshape", "_reshape_alias", "expand", "slice", "select",
                 "unsqueeze", "squeeze", "split", "split_with_sizes", "chunk", "narrow",
                 "as_strided", "_unsafe_view", "index", "index_select", "repeat", "flatten",
                 "unflatten", "alias", "detach", "unbind", "expand_as", "view_as"}
# Inductor's fused kernels name the aten ops they fuse.
FUSED_NORMALIZATION = ("softmax", "layer_norm", "rms_norm", "rsqrt")
FUSED_MOVES = ("_unsafe_view", "clone", "cat", "copy", "transpose", "permute", "view", "expand",
               "slice", "stack", "select", "unsqueeze", "index", "_to")


def whole(lo, hi):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"wants a whole number {lo} to {hi}, not '{text}'")
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"wants a whole number {lo} to {hi}, not '{text}'")
        return v
    return parse


def parse_args(argv):
    p = argparse.ArgumentParser(prog="peer_torch_layer.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=whole(1, 64), default=1)
    p.add_argument("--seq", type=whole(1, 8192), default=512)
    p.add_argument("--configs", nargs="+", choices=CONFIGS, default=list(CONFIGS))
    p.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    p.add_argument("--runs", type=whole(1, 1000), default=20)
    p.add_argument("--warmup", type=whole(0, 100), default=3)
    p.add_argument("--threads", type=whole(1, 4096), default=os.cpu_count() or 1)
    p.add_argument("--out", default="results/peer-torch")
    p.add_argument("--git-commit", default="unknown")
    return p.parse_args(argv)


# ---- the layers ----------------------------------------------------------------

def short_name(name):
    return name.split("::", 1)[1] if "::" in name else name


def build(torch, config, batch, seq):
    """The layer as a function of x, its input x and a description."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(0)

    def w(*shape):
        return torch.randn(*shape, generator=g) * 0.02

    if config == "bert":
        H, NH, D, FF = 1024, 16, 64, 4096
        p = dict(wqkv=w(3 * H, H), bqkv=w(3 * H), wo=w(H, H), bo=w(H), g1=1 + w(H), b1=w(H),
                 w1=w(FF, H), bf1=w(FF), w2=w(H, FF), bf2=w(H), g2=1 + w(H), b2=w(H))
        mask = torch.zeros(batch, 1, 1, seq)
        masked = seq // 8
        if masked:
            mask[..., seq - masked:] = -10000.0

        def heads(t):  # transpose_for_scores
            return t.view(batch, seq, NH, D).permute(0, 2, 1, 3)

        def layer(x, scope):
            qkv = F.linear(x, p["wqkv"], p["bqkv"])
            q, k, v = qkv.split(H, dim=-1)
            q, k, v = heads(q), heads(k), heads(v)
            scores = torch.matmul(q, k.transpose(-1, -2))
            scores = scores / math.sqrt(D)
            scores = scores + mask
            probs = F.softmax(scores, dim=-1)
            context = torch.matmul(probs, v)
            context = context.permute(0, 2, 1, 3).contiguous().view(batch, seq, H)
            attn = F.linear(context, p["wo"], p["bo"])
            h = F.layer_norm(attn + x, (H,), p["g1"], p["b1"], eps=1e-12)
            ff = F.linear(h, p["w1"], p["bf1"])
            ff = F.gelu(ff, approximate="tanh")
            ff = F.linear(ff, p["w2"], p["bf2"])
            return F.layer_norm(ff + h, (H,), p["g2"], p["b2"], eps=1e-12)

        about = (f"BERT-large encoder layer (post-LN), hidden {H}, {NH} heads of {D}, FFN {FF}, "
                 f"GELU tanh, padding mask on the last {masked} of {seq} keys")
        return layer, torch.randn(batch, seq, H, generator=g), about

    H, NH, NKV, D, FF, EPS, THETA = 2048, 32, 8, 64, 8192, 1e-5, 500000.0
    p = dict(n1=1 + w(H), wq=w(NH * D, H), wk=w(NKV * D, H), wv=w(NKV * D, H), wo=w(H, NH * D),
             n2=1 + w(H), wg=w(FF, H), wu=w(FF, H), wd=w(H, FF))
    inv_freq = 1.0 / (THETA ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
    freqs = torch.outer(torch.arange(seq, dtype=torch.float32), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None, None], emb.sin()[None, None]
    causal = torch.full((seq, seq), torch.finfo(torch.float32).min).triu(1)[None, None]

    def rms_norm(x, weight, scope):
        with scope("norm:rms_norm"):  # LlamaRMSNorm
            variance = x.pow(2).mean(-1, keepdim=True)
            return weight * (x * torch.rsqrt(variance + EPS))

    def rotate_half(t):
        t1, t2 = t[..., : D // 2], t[..., D // 2:]
        return torch.cat((-t2, t1), dim=-1)

    def repeat_kv(t):
        return t[:, :, None].expand(batch, NKV, NH // NKV, seq, D).reshape(batch, NH, seq, D)

    def layer(x, scope):
        h = rms_norm(x, p["n1"], scope)
        q = F.linear(h, p["wq"]).view(batch, seq, NH, D).transpose(1, 2)
        k = F.linear(h, p["wk"]).view(batch, seq, NKV, D).transpose(1, 2)
        v = F.linear(h, p["wv"]).view(batch, seq, NKV, D).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = repeat_kv(k), repeat_kv(v)
        scores = torch.matmul(q, k.transpose(2, 3)) * (D ** -0.5)
        scores = scores + causal
        probs = F.softmax(scores, dim=-1, dtype=torch.float32)
        context = torch.matmul(probs, v).transpose(1, 2).contiguous().reshape(batch, seq, H)
        x = x + F.linear(context, p["wo"])
        h = rms_norm(x, p["n2"], scope)
        return x + F.linear(F.silu(F.linear(h, p["wg"])) * F.linear(h, p["wu"]), p["wd"])

    about = (f"Llama-style decoder block (pre-norm), hidden {H}, {NH} heads and {NKV} KV heads of "
             f"{D}, FFN {FF} SwiGLU, RMSNorm eps {EPS:g}, RoPE theta {THETA:g}, causal mask")
    return layer, torch.randn(batch, seq, H, generator=g), about


# ---- classes -------------------------------------------------------------------

def own_class(name):
    """An event's class by its own name: (class, data movement), or (None, False)."""
    if "cpp_fused" in name:
        body = name.split("cpp_fused", 1)[1]
        if any(n in body for n in FUSED_NORMALIZATION):
            return "normalization", False
        rest = body
        for n in FUSED_MOVES:
            rest = rest.replace(n, "")
        return "elementwise", not rest.strip("_0123456789")
    if name.startswith("norm:"):
        return "normalization", False
    if "::" not in name:
        return None, False
    op = short_name(name)
    if op in CONTRACTION or "scaled_dot_product" in op or "mm" in op.split("_"):
        return "contraction", False
    if op in NORMALIZATION:
        return "normalization", False
    return "elementwise", op in DATA_MOVEMENT


def classify(events):
    """Self time (us) per class, of data movement, and per op: {(op, class, moves): [calls, us]}."""
    per_class = dict.fromkeys(CLASSES, 0.0)
    moves_us, per_op = 0.0, {}
    for e in events:
        us = e.self_cpu_time_total
        cls, moves = own_class(e.name)
        # a normalization scope claims everything inside it; an op with no
        # class of its own takes its nearest parent's
        parent = e.cpu_parent
        while parent is not None:
            if parent.name.startswith("norm:"):
                cls, moves = "normalization", False
                break
            if cls is None:
                cls = own_class(parent.name)[0]
            parent = parent.cpu_parent
        cls = cls or "other"
        per_class[cls] += us
        if moves:
            moves_us += us
        entry = per_op.setdefault((e.name, cls, moves), [0, 0.0])
        entry[0] += 1
        entry[1] += us
    return per_class, moves_us, per_op


# ---- files ---------------------------------------------------------------------

@contextlib.contextmanager
def atomic(path, mode="w"):
    """A file written beside path and renamed into place when whole."""
    d = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".tmp.", dir=d)
    try:
        with os.fdopen(fd, mode, newline="") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_csv(path, meta, columns, rows):
    with atomic(path) as f:
        for k, v in meta.items():
            f.write(f"# {k}: {str(v).replace(chr(10), ' ')}\n")
        out = csv.writer(f, lineterminator="\n")
        out.writerow(columns)
        out.writerows([[r.get(c, "") for c in columns] for r in rows])


def cpu_model():
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


# ---- one configuration in one mode -----------------------------------------------

def run_one(torch, args, config, mode, out):
    from torch.profiler import ProfilerActivity, profile, record_function
    layer, x, about = build(torch, config, args.batch, args.seq)
    row = dict(config=config, mode=mode, batch=args.batch, seq=args.seq, threads=args.threads,
               runs=args.runs, note="")

    def progress(what):
        print(f"  {config} {mode}: {what}", file=sys.stderr, flush=True)

    if mode == "eager":
        fn = lambda t: layer(t, record_function)  # noqa: E731
    else:
        with contextlib.suppress(Exception):  # the fused kernels named in the profile
            torch._inductor.config.cpp.enable_kernel_profile = True
        fn = torch.compile(lambda t: layer(t, lambda name: contextlib.nullcontext()))
    with torch.inference_mode():
        progress("compiling and warming up" if mode == "compile" else "warming up")
        try:
            t0 = time.perf_counter()
            for _ in range(max(args.warmup, 1 if mode == "compile" else 0)):
                fn(x)
            row["warmup_s"] = f"{time.perf_counter() - t0:.2f}"
        except Exception as e:  # torch.compile needs a C++ compiler, and more
            reason = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            progress(f"failed: {reason}")
            row["note"] = f"failed: {reason}"[:300]
            return row, {}
        progress(f"timing {args.runs} calls")
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            fn(x)
            times.append((time.perf_counter() - t0) * 1e3)
        # one call profiled PROFILED times: the one of median total self
        # time is kept (a shared machine can stall any single call)
        progress(f"profiling one call ({PROFILED} times, the median kept)")
        profiled = []
        for _ in range(PROFILED):
            with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as p:
                with record_function("layer"):
                    fn(x)
            profiled.append((sum(e.self_cpu_time_total for e in p.events()), len(profiled), p))
        prof = sorted(profiled)[PROFILED // 2][2]
        trace = os.path.join(out, f"trace-{config}-{mode}-b{args.batch}-s{args.seq}.json")
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(trace) + ".tmp.", dir=out)
        os.close(fd)
        try:
            prof.export_chrome_trace(tmp)
            os.chmod(tmp, 0o644)
            os.replace(tmp, trace)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    per_class, moves_us, per_op = classify(prof.events())
    total = sum(per_class.values())
    q = statistics.quantiles(times, n=4) if len(times) > 1 else [times[0]] * 3
    row.update(median_ms=f"{statistics.median(times):.3f}", q1_ms=f"{q[0]:.3f}",
               q3_ms=f"{q[2]:.3f}", profiled_ms=f"{total / 1e3:.3f}", about=about)
    for c in CLASSES:
        row[f"{c}_share"] = f"{per_class[c] / total:.4f}" if total else ""
    row["data_movement_share"] = f"{moves_us / total:.4f}" if total else ""
    if mode == "compile" and not any(n.startswith("cpp_fused") or "cpp_fused" in n
                                     for n, _, _ in per_op):
        row["note"] = "fused kernels not named in the profile: their time is in other"
    return row, per_op


def main(argv):
    args = parse_args(argv)
    import torch  # after the arguments: --help and a refusal need no torch
    load_start = os.getloadavg()[0]  # a busy machine slows every row: said beside them
    torch.set_num_threads(args.threads)
    os.makedirs(args.out, exist_ok=True)
    rows, ops = [], []
    for config in args.configs:
        for mode in args.modes:
            row, per_op = run_one(torch, args, config, mode, args.out)
            rows.append(row)
            total = sum(us for _, us in per_op.values())
            for (name, cls, moves), (calls, us) in sorted(per_op.items(), key=lambda kv: -kv[1][1]):
                if us > 0:
                    ops.append(dict(config=config, mode=mode, op=name, cls=cls,
                                    data_movement="yes" if moves else "no", calls=calls,
                                    self_ms=f"{us / 1e3:.4f}", share=f"{us / total:.4f}"))
    meta = {
        "about": "experiment 09's layer in PyTorch, FP32 on the CPU: the median time of a call, "
                 "and the share of one profiled call's CPU self time per class of op "
                 "(the call of median total of 3 profiled; harness/ops/peer_torch_layer.py --help)",
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cpu": cpu_model(),
        "threads": args.threads,
        "nproc": os.cpu_count(),
        "batch": args.batch,
        "seq": args.seq,
        "runs": args.runs,
        "warmup": args.warmup,
        "loadavg_1min": f"{load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end "
                        f"(with this run's own {args.threads} threads)",
        "git_commit": args.git_commit,
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    tag = f"b{args.batch}-s{args.seq}"
    write_csv(os.path.join(args.out, f"layer-{tag}.csv"), meta,
              ["config", "mode", "batch", "seq", "threads", "runs", "median_ms", "q1_ms", "q3_ms",
               "profiled_ms", "contraction_share", "normalization_share", "elementwise_share",
               "data_movement_share", "other_share", "warmup_s", "note", "about"], rows)
    write_csv(os.path.join(args.out, f"ops-{tag}.csv"), meta,
              ["config", "mode", "op", "cls", "data_movement", "calls", "self_ms", "share"], ops)

    print()
    print(f"torch {torch.__version__}, {args.threads} threads, {cpu_model()}; B={args.batch} "
          f"S={args.seq}; median of {args.runs} calls; shares of a profiled call's CPU self time "
          f"(the median of {PROFILED}); load average {meta['loadavg_1min']}")
    print("| config | mode | median ms | q1 - q3 ms | contraction | normalization | element-wise "
          "(of it data movement) | other |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    pct = lambda r, c: f"{100 * float(r[c]):.1f} %" if r.get(c) else "-"  # noqa: E731
    for r in rows:
        print(f"| {r['config']} | {r['mode']} | {r.get('median_ms', '-')} | "
              f"{r.get('q1_ms', '-')} - {r.get('q3_ms', '-')} | "
              f"{pct(r, 'contraction_share')} | {pct(r, 'normalization_share')} | "
              f"{pct(r, 'elementwise_share')} ({pct(r, 'data_movement_share')}) | "
              f"{pct(r, 'other_share')} |" + (f" {r['note']}" if r["note"] else ""))
    print()
    print(f"wrote {args.out}/layer-{tag}.csv, {args.out}/ops-{tag}.csv and the traces "
          f"{args.out}/trace-*-{tag}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
