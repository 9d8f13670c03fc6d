#!/usr/bin/env python3
"""Convert NVIDIA AIConfigurator's measured serving sample into validation/inference_aic.csv.

Source: github ai-dynamo/aiconfigurator, commit 095f58a51c4ca8e61b66ec108d86f223f8d559ce
(2026-08-21), file aic-core/src/aiconfigurator_core/systems/silicon_sample.csv (Apache-2.0):
5,221 measured end-to-end serving points (silicon_ttft_ms, silicon_tpot_ms) that AIConfigurator
uses to track its prediction accuracy (tools/accuracy_regression_testing/,
tools/accuracy_tracking/).

What it writes: one row per distinct configuration, with the columns of validation/inference.csv
followed by the per-role layout of disaggregated rows and the de-duplication bookkeeping
(validation/README.md, section "AIConfigurator's measured serving sample"). Rows of the source
that share every configuration column (engine version and client concurrency included) are
repeated runs: they become one row carrying the median TTFT and TPOT, the number of runs, the
spread 100*(max-min)/median, and the source ids joined with '|'.

Usage:
  python3 tools/aic_silicon_to_csv.py [SOURCE_CSV] [--out validation/inference_aic.csv]
Without SOURCE_CSV the file is read with `git show <commit>:<path>` from the local mirror
(--mirror, default /work/.mirror/ai-dynamo+aiconfigurator/repo).

Python 3.11, standard library only.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import statistics
import subprocess
import sys
from pathlib import Path

COMMIT = "095f58a51c4ca8e61b66ec108d86f223f8d559ce"
SOURCE_PATH = "aic-core/src/aiconfigurator_core/systems/silicon_sample.csv"
DEFAULT_MIRROR = "/work/.mirror/ai-dynamo+aiconfigurator/repo"
REPO_ROOT = Path(__file__).resolve().parents[1]

SOURCE = "ai-dynamo/aiconfigurator silicon_sample.csv (NVIDIA, Apache-2.0)"
LOCATOR = f"github ai-dynamo/aiconfigurator @{COMMIT[:8]} {SOURCE_PATH}"
SCENARIO = (
    "closed-loop concurrency sweep (AIPerf, as AIConfigurator's benchmark tooling runs it; "
    "client not recorded per row)"
)

EXTRA_COLUMNS = [
    "prefill_tp", "prefill_pp", "prefill_ep", "prefill_attn_dp", "prefill_workers", "prefill_batch",
    "decode_tp", "decode_pp", "decode_ep", "decode_attn_dp", "decode_workers", "decode_batch",
    "max_batch", "max_num_tokens", "prefill_max_num_tokens", "decode_max_num_tokens", "chunked_prefill",
    "measured_runs", "ttft_ms_spread_pct", "tpot_ms_spread_pct", "source_row_ids", "profiled_rounds",
]

ENGINES = {"trtllm": "TensorRT-LLM", "vllm": "vLLM", "sglang": "SGLang"}

# AIConfigurator system -> GPU SKU, and the node shape its systems/<name>.yaml states.
GPUS = {
    "h100_sxm": ("H100-SXM-80GB", "8 GPUs/node"),
    "h200_sxm": ("H200-SXM-141GB", "8 GPUs/node"),
    "b200_sxm": ("B200-SXM-180GB", "8 GPUs/node"),
    "b300_sxm": ("B300-SXM-288GB", "8 GPUs/node"),
    "gb200": ("GB200", "NVL72 rack, 4 GPUs/node"),
    "gb300": ("GB300", "NVL72 rack, 4 GPUs/node"),
}

QUANT = {
    "fp8": "FP8",
    "fp8_block": "FP8 (block-scaled)",
    "nvfp4": "NVFP4",
    "int4_wo": "INT4 (weight-only)",
    "bfloat16": "BF16",
}
PRECISION_WORD = {"bf16": "BF16", "fp8": "FP8", "fp4": "NVFP4", "int4": "INT4 (weight-only)"}

# Dense checkpoints in the sample: their moe_* columns carry no meaning.
DENSE_MODELS = re.compile(r"llama-3\.1|qwen3-32b", re.IGNORECASE)

PARALLEL = ("tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size")
ROLE_FIELDS = (*PARALLEL, "batch_size", "num_workers")
# Every column that describes the configuration (the rest are id, provenance and the results).
CONFIG_COLUMNS = (
    "backend", "backend_version", "model_path", "system", "precision", "mode", "isl", "osl",
    "gemm_quant_mode", "moe_quant_mode", "batch_size", *PARALLEL,
    *(f"{role}_{f}" for role in ("prefill", "decode") for f in ROLE_FIELDS),
)


def read_source(path: str | None, mirror: str, commit: str) -> list[dict[str, str]]:
    if path:
        text = Path(path).read_text(encoding="utf-8")
    else:
        text = subprocess.run(
            ["git", "-C", mirror, "show", f"{commit}:{SOURCE_PATH}"],
            check=True, capture_output=True, text=True,
        ).stdout
    return list(csv.DictReader(io.StringIO(text)))


def target_header() -> list[str]:
    with open(REPO_ROOT / "validation" / "inference.csv", newline="", encoding="utf-8") as f:
        return next(csv.reader(f))


def to_int(cell: str) -> int | None:
    return int(cell) if cell not in ("", None) else None


def provenance(source: str) -> dict[str, str]:
    """Split silicon_data_source ('k=v; k=v; free text') into a dict; free text goes to 'tag'/'image'."""
    out: dict[str, str] = {}
    for part in (p.strip() for p in source.split(";")):
        if not part:
            continue
        if "=" in part and not part.startswith(("nvcr.io", "vllm/", "lmsysorg/")):
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
        elif part.startswith("db-dump/"):
            out["db_dump"] = part.split("/", 1)[1]
        else:
            out["image"] = part
    return out


def short_provenance(p: dict[str, str]) -> str:
    measured = p.get("measured", "")[:10]
    if "db_dump" in p:
        what = f"db-dump {p['db_dump']} config_id={p.get('config_id', '?')} workflow_run_id={p.get('workflow_run_id', '?')}"
    elif "source_file" in p:
        src = p["source_file"]
        m = re.search(r"aic-auto-gap-analysis/data/(.+)$", src)
        what = f"gap-analysis {m.group(1)}" if m else f"dump {src}"
        if "gtl_job_id" in p:
            what += f" gtl_job_id={p['gtl_job_id']}"
        if p.get("wip") == "True":
            what += " (wip)"
    else:
        what = "unlabelled"
    return f"{what}, measured {measured}" if measured else what


def precision_of(r: dict[str, str]) -> str:
    gemm, moe = r["gemm_quant_mode"], r["moe_quant_mode"]
    if DENSE_MODELS.search(r["model_path"]):
        moe = gemm
    if not gemm and not moe:
        return PRECISION_WORD.get(r["precision"], "")
    g, m = QUANT.get(gemm, gemm), QUANT.get(moe, moe)
    if not moe or g == m:
        return g
    if not gemm:
        return f"{m} MoE"
    return f"{g} GEMM, {m} MoE"


def role_gpus(r: dict[str, str], role: str) -> int | None:
    tp, pp, dp = (to_int(r[f"{role}_{f}"]) for f in ("tp_size", "pp_size", "attention_dp_size"))
    if tp is None:
        return None
    return tp * (pp or 1) * (dp or 1)


def layout_problem(r: dict[str, str]) -> str:
    """AIConfigurator's own width rule (config_adapter/schema.py WorkerSettingsV1):
    tp*pp*attention_dp == moe_tp*moe_ep*pp == GPUs of a worker. Empty when it holds."""
    if DENSE_MODELS.search(r["model_path"]):
        return ""
    roles = [""] if r["mode"] == "agg" else ["prefill_", "decode_"]
    for role in roles:
        tp, pp, dp, mtp, mep = (to_int(r[f"{role}{f}"]) for f in PARALLEL)
        if tp is None or mtp is None or mep is None:
            continue
        name = role.rstrip("_") or "worker"
        if tp * (dp or 1) != mtp * mep:
            return (
                f"{name} layout fails AIC's width rule: tp*attention_dp={tp * (dp or 1)} but "
                f"moe_tp*moe_ep={mtp * mep}; GPU count uncertain"
            )
        if mtp == mep > 1 and tp == mtp * mep and (dp or 1) == 1:
            # Every row of this shape whose id states its layout says '_tp8_ep8_' (or tp4_ep4,
            # tp2_ep2) while tp_size=64 (16, 4): TP=N/EP=N on N GPUs exported as tp=N*N.
            m = re.search(r"_tp(\d+)(?:_0)?_ep(\d+)", r["id"])
            if m and int(m.group(1)) == mep and int(m.group(2)) == mep:
                why = f"source id says tp{mep}_ep{mep}"
            else:
                why = f"same pattern as rows whose id says tp{mep}_ep{mep}"
            return (
                f"{name} tp={tp}=moe_tp*moe_ep with moe_tp=moe_ep={mep}: {why}, i.e. likely TP{mep}/EP{mep} "
                f"on {mep} GPUs exported as tp={tp}; GPU count uncertain"
            )
    return ""


def layout_caveat(r: dict[str, str]) -> str:
    """Layouts that pass the width rule but cannot be what ran (the GPU count is kept)."""
    if DENSE_MODELS.search(r["model_path"]) or r["mode"] != "agg":
        return ""
    mtp, mep = to_int(r["moe_tp_size"]), to_int(r["moe_ep_size"])
    if mtp is not None and mtp > 16 and (mep or 1) == 1:
        return (
            f"MoE TP={mtp} with EP=1 is implausible (attention heads and expert width do not split "
            f"{mtp} ways); likely a wide attention-DP/EP deployment recorded as TP"
        )
    return ""


def distinct_measurements(runs: list[dict[str, str]]) -> list[tuple[float, float]]:
    """(TTFT, TPOT) of the distinct measurements among runs. Rows whose TTFT and TPOT both agree
    within 0.005 ms are one measurement (some dumps carry it rounded to 0.01 ms); the most
    precise copy represents it."""
    cells = sorted(
        {(run["silicon_ttft_ms"], run["silicon_tpot_ms"]) for run in runs},
        key=lambda c: -(len(c[0]) + len(c[1])),
    )
    kept: list[tuple[float, float]] = []
    for t, p in cells:
        tf, pf = float(t), float(p)
        if not any(abs(tf - kt) <= 0.0051 and abs(pf - kp) <= 0.0051 for kt, kp in kept):
            kept.append((tf, pf))
    return sorted(kept)


def fmt(x: float) -> str:
    return f"{x:.3f}"


def round_up(n: int, block: int) -> int:
    return (n + block - 1) // block * block


def engine_limits(r: dict[str, str]) -> dict[str, str]:
    """The engine limits AIConfigurator's benchmark deployments set (not recorded per row; derived
    by its rules, generator/rule_plugin/benchmark/{trtllm,vllm,sglang}.rule @095f58a5):
    - TensorRT-LLM: agg max_num_tokens = roundup(max_batch_size + isl + 1500, tokens_per_block 32),
      prefill roundup(isl + 1500, 32), decode roundup(max_batch_size, 32); chunked prefill off
      (backend_templates/trtllm/extra_engine_args.*.yaml.j2: `enable_chunked_prefill:
      {{ enable_chunked_prefill | default(false) }}`);
    - vLLM: agg max_num_tokens = max_batch_size + isl + 1500, prefill isl + 1500, decode
      max_batch_size; V1 always chunks prefills;
    - SGLang: max_prefill_tokens = isl + 1500 (agg, prefill, decode), enable_mixed_chunk (agg):
      prefill chunks share an iteration with decodes (agg max_num_tokens here = max_batch_size +
      isl + 1500: fmsim's budget counts the decodes too)."""
    isl = int(r["isl"])
    backend = r["backend"]
    out = {}
    def batch(v: str) -> int:
        return int(v) if v else 0
    if backend == "trtllm":
        out["chunked_prefill"] = "no"
        if r["mode"] == "agg" and r["batch_size"]:
            out["max_num_tokens"] = str(round_up(batch(r["batch_size"]) + isl + 1500, 32))
        if r["mode"] == "disagg":
            out["prefill_max_num_tokens"] = str(round_up(isl + 1500, 32))
            if r["decode_batch_size"]:
                out["decode_max_num_tokens"] = str(round_up(batch(r["decode_batch_size"]), 32))
    elif backend == "vllm":
        out["chunked_prefill"] = "yes"
        if r["mode"] == "agg" and r["batch_size"]:
            out["max_num_tokens"] = str(batch(r["batch_size"]) + isl + 1500)
        if r["mode"] == "disagg":
            out["prefill_max_num_tokens"] = str(isl + 1500)
            if r["decode_batch_size"]:
                out["decode_max_num_tokens"] = r["decode_batch_size"]
    elif backend == "sglang":
        out["chunked_prefill"] = "yes"
        if r["mode"] == "agg":
            # fmsim's budget counts the decodes mixed into the step as well as the prefill tokens.
            out["max_num_tokens"] = str(batch(r["batch_size"]) + isl + 1500)
        else:
            out["prefill_max_num_tokens"] = str(isl + 1500)
    return out


def convert(rows: list[dict[str, str]], header: list[str]) -> tuple[list[dict[str, str]], dict]:
    groups: dict[tuple, list[dict[str, str]]] = {}
    for r in rows:
        p = provenance(r["silicon_data_source"])
        r["_prov"] = p  # type: ignore[assignment]
        key = tuple(r[c] for c in CONFIG_COLUMNS) + (p.get("silicon_concurrency", ""),)
        groups.setdefault(key, []).append(r)

    def sort_key(item):
        key, runs = item
        r = runs[0]
        layout = tuple(-1 if r[c] == "" else int(r[c]) for c in CONFIG_COLUMNS[10:])
        conc = key[-1]
        return (
            r["model_path"], r["system"], r["backend"], r["backend_version"], r["mode"],
            int(r["isl"]), int(r["osl"]), layout, -1 if conc == "" else int(conc),
            r["precision"], r["gemm_quant_mode"], r["moe_quant_mode"],
        )

    ordered = sorted(groups.items(), key=sort_key)
    width = max(4, len(str(len(ordered))))
    out: list[dict[str, str]] = []
    stats = {"flagged_layout": 0, "derived_concurrency": 0, "batch_mismatch": 0}
    for n, (key, runs) in enumerate(ordered, 1):
        r = runs[0]
        row = dict.fromkeys(header + EXTRA_COLUMNS, "")
        notes: list[str] = []
        derived: list[str] = []
        confidence = "high"
        dense = bool(DENSE_MODELS.search(r["model_path"]))
        agg = r["mode"] == "agg"

        # Provenance.
        provs = []
        for run in runs:
            s = short_provenance(run["_prov"])  # type: ignore[arg-type]
            if s not in provs:
                provs.append(s)
        row.update(
            id=f"aic-{n:0{width}d}",
            source_type="aiconfigurator-silicon",
            source=SOURCE,
            source_locator=f"{LOCATOR}; " + " | ".join(provs),
            engine=ENGINES[r["backend"]],
            engine_version=r["backend_version"],
            model=r["model_path"],
            precision=precision_of(r),
            num_instances="1",
            serving_mode=r["mode"],
            scenario=SCENARIO,
            isl=r["isl"],
            osl=r["osl"],
        )
        gpu, shape = GPUS[r["system"]]
        row["gpu"] = gpu

        # Engine version caveats.
        images = sorted({run["_prov"].get("image", "") for run in runs} - {""})  # type: ignore[union-attr]
        if not r["backend_version"]:
            notes.append("engine version not stated")
        else:
            for img in images:
                m = re.search(r"ai-dynamo/(\w+)-runtime:(\S+)$", img)
                if m and m.group(2) == r["backend_version"]:
                    notes.append("engine_version is the Dynamo runtime image tag, not the engine's own version")
                    break
        if images:
            notes.append("image " + ", ".join(images))
        dyn = sorted({run["_prov"].get("dynamo_version", "") for run in runs} - {""})  # type: ignore[union-attr]
        if dyn:
            notes.append("Dynamo " + ", ".join(dyn))

        # Layout.
        if agg:
            tp, pp, dp = (to_int(r[f]) for f in ("tp_size", "pp_size", "attention_dp_size"))
            pp = pp or 1
            if dp in (None, 0):
                notes.append(f"attention_dp_size {'blank' if dp is None else '0'} in source; AIC default 1 used")
                dp = 1
            row.update(tp=str(tp), pp=str(pp), attn_dp=str(dp), ep="" if dense else r["moe_ep_size"])
            layout = f"tp={tp} pp={pp} attention_dp={r['attention_dp_size'] or '-'}"
            if not dense:
                layout += f" moe_tp={r['moe_tp_size'] or '-'} moe_ep={r['moe_ep_size'] or '-'}"
            layout += f" batch_size={r['batch_size'] or '-'}"
            # The engine's max batch per attention-DP rank as configured for the run (AIC batch_size).
            row["max_batch"] = r["batch_size"]
        else:
            for role in ("prefill", "decode"):
                row[f"{role}_tp"] = r[f"{role}_tp_size"]
                row[f"{role}_pp"] = r[f"{role}_pp_size"]
                row[f"{role}_ep"] = "" if dense else r[f"{role}_moe_ep_size"]
                row[f"{role}_attn_dp"] = r[f"{role}_attention_dp_size"]
                row[f"{role}_workers"] = r[f"{role}_num_workers"]
                row[f"{role}_batch"] = r[f"{role}_batch_size"]
            layout = " / ".join(
                f"{role} tp={r[f'{role}_tp_size'] or '-'} pp={r[f'{role}_pp_size'] or '-'} "
                f"attention_dp={r[f'{role}_attention_dp_size'] or '-'}"
                + ("" if dense else f" moe_tp={r[f'{role}_moe_tp_size'] or '-'} moe_ep={r[f'{role}_moe_ep_size'] or '-'}")
                + f" workers={r[f'{role}_num_workers'] or '-'} batch={r[f'{role}_batch_size'] or '-'}"
                for role in ("prefill", "decode")
            )
        row["system_notes"] = f"AIConfigurator system '{r['system']}' ({shape}); AIC layout {layout}"
        limits = engine_limits(r)
        row.update(limits)

        caveat = layout_caveat(r)
        if caveat:
            notes.append(caveat)
            confidence = "medium"
            stats["flagged_layout"] += 1
        problem = layout_problem(r)
        if problem:
            notes.append(problem)
            confidence = "medium"
            stats["flagged_layout"] += 1
        elif agg:
            row["gpu_count"] = str(tp * pp * dp)
            derived.append("gpu_count(=tp*pp*attn_dp)")
        else:
            pg, dg = role_gpus(r, "prefill"), role_gpus(r, "decode")
            pw, dw = to_int(r["prefill_num_workers"]), to_int(r["decode_num_workers"])
            if None not in (pg, dg, pw, dw):
                row["gpu_count"] = str(pw * pg + dw * dg)
                derived.append("gpu_count(=prefill_workers*prefill tp*pp*attn_dp+decode_workers*decode tp*pp*attn_dp)")
            else:
                notes.append("worker counts and per-role batch not recorded; gpu_count unknown")

        # Concurrency: the client concurrency recorded as silicon_concurrency.
        conc = key[-1]
        if conc:
            row["concurrency_or_batch"] = conc
            if agg and r["batch_size"]:
                b = int(r["batch_size"])
                if b * (to_int(r["pp_size"]) or 1) * max(to_int(r["attention_dp_size"]) or 1, 1) != int(conc):
                    notes.append(
                        f"AIC batch_size={b} != concurrency/(pp*attention_dp): replicas or attention DP not recorded, "
                        "so the GPUs and engine limits that served the clients are unknown (gpu_count blank)"
                    )
                    row["gpu_count"] = ""
                    for k in ("max_batch", "max_num_tokens"):
                        row[k] = ""
                    confidence = "medium"
                    stats["batch_mismatch"] += 1
        else:
            if agg and r["batch_size"]:
                c = int(r["batch_size"]) * (to_int(r["pp_size"]) or 1) * max(to_int(r["attention_dp_size"]) or 1, 1)
                formula = "batch_size*pp*attention_dp"
            elif not agg and r["decode_batch_size"] and r["decode_num_workers"]:
                c = (
                    int(r["decode_batch_size"]) * int(r["decode_num_workers"])
                    * max(to_int(r["decode_attention_dp_size"]) or 1, 1)
                )
                formula = "decode_batch*decode_workers*decode_attention_dp"
            else:
                c = None
            if c is not None:
                row["concurrency_or_batch"] = str(c)
                derived.append(f"concurrency_or_batch(={formula}, AIC convention)")
                notes.append("client concurrency not recorded; derived from AIC's batch columns")
                confidence = "medium"
                stats["derived_concurrency"] += 1

        # Results: median over repeated runs.
        # Source rows with identical TTFT and TPOT are one measurement exported into several
        # dumps (2026-03-25.csv, 2026-04-06.csv, db-dump/2026-04-27, ...), not repeated runs:
        # the median and the spread are taken over the distinct measurements.
        distinct = distinct_measurements(runs)
        ttfts = [t for t, _ in distinct]
        tpots = [p for _, p in distinct]
        mt, mp = statistics.median(ttfts), statistics.median(tpots)
        row["ttft_ms_mean"], row["tpot_ms_mean"] = fmt(mt), fmt(mp)
        row["measured_runs"] = str(len(runs))
        if len(distinct) > 1:
            row["ttft_ms_spread_pct"] = f"{100 * (max(ttfts) - min(ttfts)) / mt:.1f}"
            row["tpot_ms_spread_pct"] = f"{100 * (max(tpots) - min(tpots)) / mp:.1f}"
            derived.append(f"ttft_ms_mean,tpot_ms_mean(=median of {len(distinct)} distinct runs)")
        if len(distinct) < len(runs):
            notes.append(
                f"{len(runs)} source rows hold {len(distinct)} distinct measurement"
                f"{'s' if len(distinct) > 1 else ''} (the rest are copies in other dumps, some rounded to 0.01 ms)"
            )
            stats["copies"] = stats.get("copies", 0) + len(runs) - len(distinct)
        row["source_row_ids"] = "|".join(run["id"] for run in runs)

        # Measurement caveats.
        notes.append("TTFT/TPOT statistic (mean or median) not stated")
        if r["model_path"] == "openai/gpt-oss-120b" and r["gemm_quant_mode"] == "nvfp4":
            notes.append("AIC labels gpt-oss 'nvfp4'; the checkpoint ships MXFP4 expert weights")
        if r["id"].startswith("dsr1_") and r["model_path"] == "deepseek-ai/DeepSeek-V3":
            notes.append("source id says dsr1; model_path is DeepSeek-V3 (same architecture)")
        if not row["precision"]:
            notes.append("quant mode not stated (AIC infers it from the checkpoint)")
        if mp > 500:  # one row: Qwen3-32B disagg on H100, TPOT 560 ms against ~20-60 ms for its series
            notes.append("TPOT over 500 ms, an order of magnitude above its series; measurement looks broken")
            confidence = "low"
        if mt > 120000:
            notes.append("TTFT over 2 min: admission/queueing past KV capacity, not prefill time")

        if any(k.endswith("max_num_tokens") for k in limits):
            derived.append("max_num_tokens,prefill_max_num_tokens,decode_max_num_tokens,chunked_prefill"
                           "(=AIConfigurator's benchmark rules, generator/rule_plugin/benchmark/<engine>.rule)")
        # AIPerf as AIConfigurator's benchmark tooling runs it: concurrency x 20 profiled requests
        # (bench_run.sh.j2 BENCH_MULTI_ROUND=20; sflow.py MULTI_ROUND 20) after a warm-up that
        # AIPerf drains before profiling, so each client's first profiled request starts together.
        row["profiled_rounds"] = "20"
        derived.append("profiled_rounds(=AIConfigurator's bench_run.sh.j2 BENCH_MULTI_ROUND default 20)")
        row["derived_fields"] = ";".join(derived)
        row["confidence"] = confidence
        row["notes"] = "; ".join(notes)
        out.append(row)
    stats["rows_in"] = len(rows)
    stats["rows_out"] = len(out)
    return out, stats


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", nargs="?", help="silicon_sample.csv (default: read from the mirror via git)")
    ap.add_argument("--mirror", default=DEFAULT_MIRROR, help="bare git dir of ai-dynamo/aiconfigurator")
    ap.add_argument("--commit", default=COMMIT)
    ap.add_argument("--out", default=str(REPO_ROOT / "validation" / "inference_aic.csv"))
    args = ap.parse_args()

    rows = read_source(args.source, args.mirror, args.commit)
    header = target_header()
    out, stats = convert(rows, header)
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=header + EXTRA_COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    print(
        f"{stats['rows_in']} source rows -> {stats['rows_out']} configurations -> {args.out} "
        f"(layout flagged {stats['flagged_layout']}, concurrency derived {stats['derived_concurrency']}, "
        f"batch/concurrency mismatch {stats['batch_mismatch']}, copies {stats.get('copies', 0)})",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
