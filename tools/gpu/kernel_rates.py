#!/usr/bin/env python3
"""Measures the kernel rates the training and serving calibration rests on, on one CUDA GPU.

Run on a machine with a GPU and PyTorch (it is not part of the build or of the tests: CI has no
GPU):  python3 tools/gpu/kernel_rates.py OUT_DIR [FAMILY,FAMILY...]  (families: the function names
below, device_info hbm launch gemm grouped_gemm attention decode moe_dispatch; default all)

Writes CSV files into OUT_DIR, one per kernel family, every value with its unit in the column name:
  device.csv          name, multiprocessors, memory seen by CUDA and by nvidia-smi, context cost
  hbm.csv             device-to-device copy, read-only reduction and fill bandwidth
  gemm.csv            dense GEMM (m x k) @ (k x n) in BF16, FP8 per-tensor and FP8 row-wise
  grouped_gemm.csv    MoE expert GEMMs (torch._grouped_mm) by tokens per expert and expert size
  attention.csv       causal SDPA forward and backward (flash = FlashAttention-2, cudnn) by
                      sequence length and head dimension
  decode.csv          one decode step's attention over a KV cache (GQA, bf16): bytes per second
  launch.csv          back-to-back launch cost of a tiny kernel
  moe_dispatch.csv    one GPU's MoE token dispatch without the expert GEMMs or the all-to-all:
                      router GEMM, softmax and top-k, the token count per expert copied to the host
                      (the dropless dispatcher's synchronisation), permutation and unpermutation,
                      forward and backward (Megatron-Core's alltoall dispatcher's local work)

Method (the workplace's device METHOD.md): random normal inputs (never zeros), warm-up before
timing, CUDA events around a batch of launches, the median of several batches; inputs rotate over
enough buffers that they do not sit in the 50-60 MB L2 where that matters. Each family runs in its
own try block, so one unsupported kernel does not lose the others; a failure is written as a row
with the error text.
"""
import csv
import math
import os
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F

DEV = torch.device("cuda")
BF16 = torch.bfloat16
FP8 = torch.float8_e4m3fn


def timed(fn, min_batch_s=0.02, batches=5):
    """Median seconds per call of fn over `batches` batches, each at least min_batch_s long."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    one = max(start.elapsed_time(end) / 1e3, 1e-6)
    reps = max(1, min(2000, int(min_batch_s / one)))
    samples = []
    for _ in range(batches):
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / 1e3 / reps)
    samples.sort()
    return samples[len(samples) // 2]


def write(out, name, header, rows):
    with open(os.path.join(out, name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    print(f"wrote {name}: {len(rows)} rows", flush=True)


def smi(query):
    try:
        r = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"],
                           capture_output=True, text=True, timeout=30)
        return r.stdout.strip()
    except Exception as e:  # noqa: BLE001
        return f"error: {e}"


def device_info(out):
    rows = []
    used_before = smi("memory.used")
    torch.cuda.init()
    x = torch.empty(1, device=DEV)
    torch.cuda.synchronize()
    free0, total = torch.cuda.mem_get_info()
    used_ctx = smi("memory.used")
    a = torch.randn(1024, 1024, device=DEV, dtype=BF16)
    (a @ a).sum().item()
    torch.cuda.synchronize()
    free1, _ = torch.cuda.mem_get_info()
    used_blas = smi("memory.used")
    p = torch.cuda.get_device_properties(0)
    rows += [
        ["name", p.name, ""],
        ["multiprocessors", p.multi_processor_count, "count"],
        ["total_memory_properties", p.total_memory, "bytes"],
        ["total_memory_mem_get_info", total, "bytes"],
        ["free_after_context", free0, "bytes"],
        ["free_after_first_bf16_matmul", free1, "bytes"],
        ["torch_reserved_after_first_matmul", torch.cuda.memory_reserved(), "bytes"],
        ["nvidia_smi_memory_total", smi("memory.total"), "MiB"],
        ["nvidia_smi_memory_reserved", smi("memory.reserved"), "MiB"],
        ["nvidia_smi_used_before_context", used_before, "MiB"],
        ["nvidia_smi_used_after_context", used_ctx, "MiB"],
        ["nvidia_smi_used_after_first_matmul", used_blas, "MiB"],
        ["power_limit", smi("power.limit"), "W"],
        ["clocks_max_sm", smi("clocks.max.sm"), "MHz"],
        ["clocks_max_mem", smi("clocks.max.memory"), "MHz"],
        ["driver", smi("driver_version"), ""],
        ["torch", torch.__version__, ""],
        ["cuda", torch.version.cuda, ""],
        ["cudnn", torch.backends.cudnn.version(), ""],
    ]
    del x, a
    write(out, "device.csv", ["key", "value", "unit"], rows)


def hbm(out):
    rows = []
    for gib in (0.25, 1, 4):
        n = int(gib * 2**30) // 2
        src = torch.randn(n, device=DEV, dtype=BF16)
        dst = torch.empty_like(src)
        t = timed(lambda: dst.copy_(src))
        rows.append(["copy", gib, 2 * n * 2, t, 2 * n * 2 / t / 1e12])
        t = timed(lambda: torch.sum(src, dtype=torch.float32))
        rows.append(["read_sum", gib, n * 2, t, n * 2 / t / 1e12])
        t = timed(lambda: dst.fill_(1.5))
        rows.append(["write_fill", gib, n * 2, t, n * 2 / t / 1e12])
        del src, dst
    write(out, "hbm.csv", ["kernel", "buffer_gib", "bytes_moved", "seconds", "tb_per_s"], rows)


def gemm(out):
    rows = []
    shapes = [(4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192), (28672, 8192), (8192, 28672),
              (2048, 7168), (7168, 2048)]
    ms = [16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
    cases = [(m, n, k) for (n, k) in shapes for m in ms]
    cases += [(s, s, s) for s in (256, 512, 1024, 2048, 4096, 8192, 16384)]
    for m, n, k in cases:
        sets = max(1, min(8, int(2 * 256e6 / ((m * k + k * n) * 2))))  # rotate past the L2
        a = [torch.randn(m, k, device=DEV, dtype=BF16) for _ in range(sets)]
        w = [torch.randn(n, k, device=DEV, dtype=BF16) / math.sqrt(k) for _ in range(sets)]
        i = [0]

        def bf16():
            j = i[0] = (i[0] + 1) % sets
            return a[j] @ w[j].t()

        flops = 2.0 * m * n * k
        t = timed(bf16)
        rows.append(["bf16", m, n, k, t, flops / t / 1e12, ""])
        try:
            a8 = [x.to(FP8) for x in a]
            w8 = [x.to(FP8) for x in w]
            one = torch.ones((), device=DEV, dtype=torch.float32)

            def fp8_tensor():
                j = i[0] = (i[0] + 1) % sets
                return torch._scaled_mm(a8[j], w8[j].t(), scale_a=one, scale_b=one, out_dtype=BF16)

            t = timed(fp8_tensor)
            rows.append(["fp8_tensorwise", m, n, k, t, flops / t / 1e12, ""])
            sa = torch.ones(m, 1, device=DEV, dtype=torch.float32)
            sb = torch.ones(1, n, device=DEV, dtype=torch.float32)

            def fp8_row():
                j = i[0] = (i[0] + 1) % sets
                return torch._scaled_mm(a8[j], w8[j].t(), scale_a=sa, scale_b=sb, out_dtype=BF16)

            t = timed(fp8_row)
            rows.append(["fp8_rowwise", m, n, k, t, flops / t / 1e12, ""])
            del a8, w8
        except Exception as e:  # noqa: BLE001
            rows.append(["fp8", m, n, k, "", "", repr(e)[:200]])
        del a, w
    write(out, "gemm.csv", ["precision", "m", "n", "k", "seconds", "tflop_per_s", "error"], rows)


def grouped_gemm(out):
    rows = []
    # (model, hidden h, expert ffn f): each expert runs fc1 (t x h) @ (h x 2f) (SwiGLU gate and up
    # fused) and fc2 (t x f) @ (f x h); GPT-OSS's f is its expert intermediate size.
    experts = [("deepseek-v3", 7168, 2048), ("qwen3-235b-a22b", 4096, 1536), ("qwen3-30b-a3b", 2048, 768),
               ("gpt-oss-120b", 2880, 2880), ("mixtral-8x7b", 4096, 14336), ("llama4", 5120, 8192)]
    groups = 8
    for name, h, f in experts:
        for t in (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192):
            for gemm_name, k, n in (("fc1", h, 2 * f), ("fc2", f, h)):
                try:
                    x = torch.randn(groups * t, k, device=DEV, dtype=BF16)
                    w = torch.randn(groups, n, k, device=DEV, dtype=BF16) / math.sqrt(k)
                    offs = torch.arange(1, groups + 1, device=DEV, dtype=torch.int32) * t
                    fn = lambda: torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)  # noqa: E731
                    sec = timed(fn)
                    flops = 2.0 * groups * t * n * k
                    byts = 2.0 * (groups * t * k + groups * k * n + groups * t * n)
                    rows.append([name, gemm_name, groups, t, n, k, sec, flops / sec / 1e12, byts / sec / 1e12, ""])
                    del x, w
                except Exception as e:  # noqa: BLE001
                    rows.append([name, gemm_name, groups, t, n, k, "", "", "", repr(e)[:200]])
    write(out, "grouped_gemm.csv",
          ["model", "gemm", "groups", "tokens_per_group", "n", "k", "seconds", "tflop_per_s", "tb_per_s", "error"],
          rows)


def attention(out):
    rows = []
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    for d in (64, 128):
        heads = 4096 // d
        for s in (1024, 2048, 4096, 8192, 16384, 32768):
            b = max(1, 16384 // s)
            q = torch.randn(b, heads, s, d, device=DEV, dtype=BF16, requires_grad=True)
            k = torch.randn(b, heads, s, d, device=DEV, dtype=BF16, requires_grad=True)
            v = torch.randn(b, heads, s, d, device=DEV, dtype=BF16, requires_grad=True)
            g = torch.randn(b, heads, s, d, device=DEV, dtype=BF16)
            fwd_flops = 4.0 * b * heads * s * s * d / 2  # causal: half the score matrix
            for bname, be in backends:
                try:
                    with sdpa_kernel([be]):
                        tf = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))

                        def fwd_bwd():
                            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                            torch.autograd.grad(o, (q, k, v), g)

                        tfb = timed(fwd_bwd)
                    tb = max(tfb - tf, 1e-9)
                    rows.append([bname, b, heads, s, d, tf, fwd_flops / tf / 1e12, tb,
                                 2.5 * fwd_flops / tb / 1e12, ""])
                except Exception as e:  # noqa: BLE001
                    rows.append([bname, b, heads, s, d, "", "", "", "", repr(e)[:200]])
            del q, k, v, g
    write(out, "attention.csv",
          ["backend", "batch", "heads", "seq", "head_dim", "fwd_seconds", "fwd_tflop_per_s", "bwd_seconds",
           "bwd_tflop_per_s", "error"], rows)


def decode(out):
    rows = []
    from torch.nn.attention import SDPBackend, sdpa_kernel
    kv_heads, group, d = 8, 8, 128
    for batch in (8, 64):
        for ctx in (1024, 4096, 16384, 32768):
            # GQA decode: the `group` query heads of one KV head attend together, as `group` query
            # rows of one head (the layout flash-decoding kernels use); no mask at decode.
            q = torch.randn(batch, kv_heads, group, d, device=DEV, dtype=BF16)
            k = torch.randn(batch, kv_heads, ctx, d, device=DEV, dtype=BF16)
            v = torch.randn(batch, kv_heads, ctx, d, device=DEV, dtype=BF16)
            byts = 2.0 * batch * kv_heads * ctx * d * 2
            for bname, be in (("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION),
                              ("cudnn", SDPBackend.CUDNN_ATTENTION)):
                try:
                    with sdpa_kernel([be]):
                        sec = timed(lambda: F.scaled_dot_product_attention(q, k, v))
                    rows.append([bname, batch, kv_heads, group, ctx, d, byts, sec, byts / sec / 1e12, ""])
                except Exception as e:  # noqa: BLE001
                    rows.append([bname, batch, kv_heads, group, ctx, d, byts, "", "", repr(e)[:200]])
            del q, k, v
    write(out, "decode.csv",
          ["backend", "batch", "kv_heads", "query_heads_per_kv", "context", "head_dim", "kv_bytes", "seconds",
           "tb_per_s", "error"], rows)


def launch(out):
    x = torch.randn(1, device=DEV)
    rows = []
    t = timed(lambda: x.add_(1.0), min_batch_s=0.05)
    rows.append(["eager_back_to_back", t * 1e6])
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        x.add_(1.0)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(100):
            x.add_(1.0)
    t = timed(g.replay, min_batch_s=0.05)
    rows.append(["cuda_graph_per_kernel", t / 100 * 1e6])
    write(out, "launch.csv", ["mode", "microseconds_per_kernel"], rows)


def moe_dispatch(out):
    rows = []
    # (model, hidden, experts, top-k): tokens per GPU per micro-batch 4,096-16,384.
    cases = [("qwen3-30b-a3b", 2048, 128, 8), ("qwen3-235b-a22b", 4096, 128, 8), ("deepseek-v3", 7168, 256, 8),
             ("gpt-oss-120b", 2880, 128, 4), ("mixtral-8x7b", 4096, 8, 2)]
    for name, h, experts, topk in cases:
        for tokens in (4096, 16384):
            try:
                x = torch.randn(tokens, h, device=DEV, dtype=BF16, requires_grad=True)
                router = torch.randn(experts, h, device=DEV, dtype=BF16, requires_grad=True)
                g = torch.randn(tokens, h, device=DEV, dtype=BF16)

                def layer(sync=True):
                    logits = x @ router.t()
                    probs = torch.softmax(logits.float(), dim=-1)
                    weights, idx = torch.topk(probs, topk, dim=-1)
                    flat = idx.reshape(-1)
                    counts = torch.bincount(flat, minlength=experts)
                    if sync:
                        counts.cpu()  # the dropless dispatcher's host copy of tokens per expert
                    order = torch.argsort(flat, stable=True)
                    permuted = x.index_select(0, order // topk)  # rows grouped by expert
                    # (expert GEMMs and the all-to-all would run here)
                    scaled = permuted * weights.reshape(-1)[order].unsqueeze(-1).to(BF16)
                    y = torch.zeros_like(x).index_add(0, order // topk, scaled)
                    return y

                tf = timed(lambda: layer())
                tf_nosync = timed(lambda: layer(False))

                def fwd_bwd():
                    y = layer()
                    torch.autograd.grad(y, (x, router), g)

                tfb = timed(fwd_bwd)
                rows.append([name, h, experts, topk, tokens, tf * 1e6, tf_nosync * 1e6, (tfb - tf) * 1e6, ""])
                del x, router, g
            except Exception as e:  # noqa: BLE001
                rows.append([name, h, experts, topk, tokens, "", "", "", repr(e)[:200]])
    write(out, "moe_dispatch.csv",
          ["model", "hidden", "experts", "topk", "tokens", "fwd_us", "fwd_without_host_sync_us", "bwd_us", "error"],
          rows)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    families = (device_info, hbm, launch, gemm, grouped_gemm, attention, decode, moe_dispatch)
    only = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else None
    unknown = sorted(only - {fn.__name__ for fn in families}) if only else []
    if unknown:
        print(f"kernel_rates.py: FAMILY: unknown {', '.join(unknown)}; allowed: "
              f"{', '.join(fn.__name__ for fn in families)}", file=sys.stderr)
        sys.exit(2)
    for fn in families:
        if only and fn.__name__ not in only:
            continue
        t0 = time.time()
        try:
            fn(out)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
        torch.cuda.empty_cache()
        print(f"{fn.__name__}: {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
