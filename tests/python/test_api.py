"""The Python API (import fmsim) against the fmsim executable: same arguments, same --json
documents, same error messages. Run by ctest (python_api) with PYTHONPATH at build/python and
FMSIM_BINARY / FMSIM_SOURCE_DIR from CMake; writes only into its own temporary directory."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import fmsim

BINARY = os.environ["FMSIM_BINARY"]
SOURCE = os.environ["FMSIM_SOURCE_DIR"]


def cli_json(*args):
    """What the executable prints for ARGS --json, parsed."""
    r = subprocess.run([BINARY, *args, "--json"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def timeless(doc):
    """DOC without the wall-clock measurements (wall_s, search_ms, seconds), which differ run to run."""
    if isinstance(doc, dict):
        return {k: timeless(v) for k, v in doc.items() if k not in ("wall_s", "search_ms", "seconds")}
    if isinstance(doc, list):
        return [timeless(v) for v in doc]
    return doc


def cli_error(*args):
    """The executable's exit status and its error message (after 'fmsim: error: ')."""
    r = subprocess.run([BINARY, *args], capture_output=True, text=True)
    first = r.stderr.splitlines()[0]
    return r.returncode, first[len("fmsim: error: "):]


class SameAsTheCommandLine(unittest.TestCase):
    def test_train_keywords_return_the_cli_json(self):
        # tp=8 is --tp 8, seq is --seq; the dict is exactly `fmsim train ... --json`.
        got = fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:4", tp=8, gbs=64, seq=4096)
        want = cli_json("train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:4", "--tp", "8", "--gbs", "64",
                        "--seq", "4096")
        self.assertEqual(got, want)
        self.assertGreater(got["step_time_s"], 0)
        self.assertEqual(got["layout"]["tp"], 8)
        self.assertEqual(got["layout"]["dp"], 4)  # 32 GPUs / tp 8

    def test_boolean_and_list_keywords(self):
        # tp_overlap=True is the flag --tp-overlap; a list is comma-joined (--systems a,b).
        self.assertEqual(fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:2", tp=8, tp_overlap=True),
                         cli_json("train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--tp", "8",
                                  "--tp-overlap"))
        got = fmsim.plan(model="llama3.1-8b", gpus=32, systems=["p5.48xlarge", "p5en.48xlarge"], threads=2, top=2)
        self.assertIsNotNone(got["best"])
        self.assertIn(got["best"]["system"], ("p5.48xlarge", "p5en.48xlarge"))

    def test_job_file_job_dict_and_keywords_agree(self):
        path = os.path.join(SOURCE, "examples", "llama70b_job.yaml")
        from_file = fmsim.train(job=path)
        # The same job as examples/llama70b_job.yaml, as a dict.
        job = {"kind": "TrainingJob", "model": "llama3.1-70b", "cluster": "p5.48xlarge:64", "seq_len": 8192,
               "precision": "fp8", "recompute": "selective", "stack": "megatron",
               "parallelism": {"tp": 8, "pp": 4, "vp": 5, "sharding": "zero1", "tp_overlap": True},
               "batch": {"global": 512, "micro": 1}}
        self.assertEqual(fmsim.train(job=job), from_file)
        # Flags override the job's values, as on the command line.
        self.assertEqual(fmsim.train(job=job, gbs=1024)["layout"]["global_batch"], 1024)
        self.assertEqual(from_file, cli_json("train", "--job", path))

    def test_collective_catalog_models(self):
        rows = fmsim.collective(cluster="p5.48xlarge:2", op="all_gather", min_bytes="1M", max_bytes="1G")["rows"]
        self.assertEqual(len(rows), 11)  # 2^20 .. 2^30
        self.assertEqual(rows[0]["bytes"], 1 << 20)
        systems = {s["name"] for s in fmsim.catalog("systems")}
        self.assertIn("p5.48xlarge", systems)
        self.assertIn("p6-b200.48xlarge", systems)
        self.assertIn("llama3.1-8b", {m["name"] for m in fmsim.models()})
        self.assertEqual(fmsim.models("show", "llama3.1-8b"), cli_json("models", "show", "llama3.1-8b"))

    def test_extra_catalog_file(self):
        custom = os.path.join(SOURCE, "examples", "custom_catalog.yaml")
        got = fmsim.catalog("systems", catalog_files=[custom])
        self.assertEqual(got, cli_json("--catalog", custom, "catalog", "systems"))


class ErrorsCarryTheCliMessage(unittest.TestCase):
    def assert_same_error(self, call, *cli_args):
        status, message = cli_error(*cli_args)
        self.assertEqual(status, 2)
        with self.assertRaises(fmsim.InputError) as caught:
            call()
        self.assertEqual(str(caught.exception), message)
        self.assertEqual(caught.exception.status, 2)
        self.assertIsInstance(caught.exception, ValueError)

    def test_bad_values(self):
        self.assert_same_error(lambda: fmsim.collective(cluster="p5.48xlarge:2", max_bytes="1e30"),
                               "collective", "--cluster", "p5.48xlarge:2", "--max-bytes", "1e30")
        self.assert_same_error(lambda: fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:2", seq=2147483647),
                               "train", "--model", "llama3.1-8b", "--cluster", "p5.48xlarge:2", "--seq", "2147483647")
        self.assert_same_error(lambda: fmsim.train(model="no-such-model", cluster="p5.48xlarge:2"),
                               "train", "--model", "no-such-model", "--cluster", "p5.48xlarge:2")

    def test_unknown_keyword_is_a_type_error(self):
        # As for any Python function: TypeError naming the keyword, with the closest real ones.
        with self.assertRaises(TypeError) as caught:
            fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:2", tpp=8)
        self.assertTrue(str(caught.exception).startswith(
            "train() got an unexpected keyword argument 'tpp'; did you mean 'tp'"), str(caught.exception))
        self.assertNotIsInstance(caught.exception, fmsim.InputError)
        with self.assertRaises(TypeError) as caught:
            fmsim.plan_serve(model="llama3.1-8b", familes="p5.48xlarge")
        self.assertIn("plan_serve() got an unexpected keyword argument 'familes'; did you mean 'families'",
                      str(caught.exception))
        with self.assertRaises(TypeError):
            fmsim.catalog("show", "p5.48xlarge", jsn=True)
        # The RL planner's own flags are keywords of plan(rl=True): a bad value is the CLI's error.
        with self.assertRaises(fmsim.InputError) as caught:
            fmsim.plan(rl=True, policy="qwen3-8b", cluster="p5.48xlarge:2", prompts=0)
        self.assertIn("--prompts", str(caught.exception))

    def test_help_lists_each_keyword_with_its_default(self):
        import inspect
        signature = inspect.signature(fmsim.train)
        self.assertEqual(signature.parameters["tp"].default, 1)
        self.assertEqual(signature.parameters["model"].default, "llama3.1-8b")
        self.assertIs(signature.parameters["tp_overlap"].default, False)
        self.assertEqual(signature.parameters["tp"].kind, inspect.Parameter.KEYWORD_ONLY)
        doc = fmsim.train.__doc__
        self.assertIn("    tp: int = 1\n        Tensor-parallel size", doc)
        self.assertIn("    seq: int = ", doc)
        self.assertIn("    num_requests: int = 1000", fmsim.serve.__doc__)
        self.assertIn("    rate: float = ", fmsim.serve.__doc__)
        for function in (fmsim.plan, fmsim.collective, fmsim.checkpoint, fmsim.goodput, fmsim.run_job,
                         fmsim.plan_serve, fmsim.rl, fmsim.cluster, fmsim.compare):
            self.assertGreater(len(inspect.signature(function).parameters), 3, function.__name__)

    def test_type_stub_beside_the_package(self):
        # __init__.pyi, written by the build from the same signatures, for editors and type checkers.
        stub_path = os.path.join(os.path.dirname(fmsim.__file__), "__init__.pyi")
        with open(stub_path) as f:
            stub = f.read()
        self.assertIn("def train(*, ", stub)
        self.assertIn("tp: int = 1", stub)
        self.assertIn("def serve(*, ", stub)
        self.assertIn("def metrics(action: str, directory: str | os.PathLike", stub.replace("'", ""))
        self.assertTrue(os.path.exists(os.path.join(os.path.dirname(fmsim.__file__), "py.typed")))

    def test_bad_job_dict_names_the_field(self):
        with self.assertRaises(fmsim.InputError) as caught:
            fmsim.train(job={"model": "llama3.1-8b", "cluster": "p5.48xlarge:2", "batch": {"global": -4}})
        self.assertIn("batch.global", str(caught.exception))

    def test_serve(self):
        if "serve" not in fmsim.commands():
            with self.assertRaises(fmsim.InputError) as caught:
                fmsim.serve(model="llama3.1-8b")
            self.assertIn("no 'serve' command", str(caught.exception))
            return
        got = fmsim.serve(model="llama3.1-8b", cluster="p5en.48xlarge", tp=1, isl=512, osl=128, num_requests=64)
        self.assertEqual(got, cli_json("serve", "--model", "llama3.1-8b", "--cluster", "p5en.48xlarge", "--tp", "1",
                                       "--isl", "512", "--osl", "128", "--num-requests", "64"))

    def test_rl_cluster_topology_plan_serve(self):
        job = os.path.join(SOURCE, "examples", "grpo_qwen3_32b_rl.yaml")
        self.assertEqual(timeless(fmsim.rl(job=job, prompts=64)), timeless(cli_json("rl", "--job", job, "--prompts", "64")))
        self.assertEqual(timeless(fmsim.cluster(cluster="p5.48xlarge:4", synthetic=50, compare="fifo")),
                         timeless(cli_json("cluster", "--cluster", "p5.48xlarge:4", "--synthetic", "50", "--compare", "fifo")))
        self.assertEqual(fmsim.topology("k8s", cluster="p5.48xlarge:20"),
                         cli_json("topology", "k8s", "--cluster", "p5.48xlarge:20"))
        flags = ["--model", "llama3.1-8b", "--precision", "fp8", "--families", "p5.48xlarge,p5en.48xlarge", "--isl",
                 "512", "--osl", "128", "--rate", "50", "--slo-ttft", "1s", "--slo-tpot", "40ms", "--probe-requests", "60"]
        self.assertEqual(fmsim.plan_serve(model="llama3.1-8b", precision="fp8", families=["p5.48xlarge", "p5en.48xlarge"],
                                          isl=512, osl=128, rate=50, slo_ttft="1s", slo_tpot="40ms", probe_requests=60),
                         cli_json("plan-serve", *flags))

    def test_older_flag_spellings_are_keywords_too(self):
        # docs/cli.md: plan_serve(systems=...) as plan(systems=...), families= its older name; rl(model=...),
        # policy= its older name. Both spellings give the same result.
        common = dict(model="llama3.1-8b", rate=20, probe_requests=30, no_disagg=True)
        self.assertEqual(fmsim.plan_serve(systems="p5.48xlarge", **common),
                         fmsim.plan_serve(families="p5.48xlarge", **common))
        job = dict(cluster="p5.48xlarge:2", prompts=64)
        self.assertEqual(timeless(fmsim.rl(model="qwen3-8b", **job)), timeless(fmsim.rl(policy="qwen3-8b", **job)))

    def test_sweep(self):
        # The chunks run in fmsim processes: inside Python, $FMSIM_EXECUTABLE (else fmsim on PATH).
        os.environ["FMSIM_EXECUTABLE"] = BINARY
        with tempfile.TemporaryDirectory() as tmp:
            grid = os.path.join(SOURCE, "examples", "sweep_train.yaml")
            summary = fmsim.sweep(grid, out=os.path.join(tmp, "s"), jobs=2)
            self.assertEqual(summary["points"], 36)  # 2 models x 3 clusters x 3 tp x 2 seq
            self.assertEqual(summary["errors"], 0)
            with open(summary["jsonl"]) as f:
                records = [json.loads(line) for line in f]
            self.assertEqual([r["point"] for r in records], list(range(36)))
            # The first point is llama3.1-8b on p5.48xlarge:16, tp 2, seq 4096: the same numbers as train.
            first = fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:16", tp=2, seq=4096, gbs=512,
                                recompute="selective")
            self.assertEqual(records[0]["values"]["step_time_s"], first["step_time_s"])

    def test_every_json_command_has_a_function(self):
        # Every command of this build that prints --json (itself or one of its subcommands) is a
        # function of the package, and that function runs that command.
        for name in fmsim.commands():
            status, text, _ = fmsim.cli([name, "--help"])
            self.assertEqual(status, 0, name)
            subs = []
            if "SUBCOMMANDS" in text.upper():
                after = text[text.upper().index("SUBCOMMANDS"):].splitlines()[1:]
                subs = [line.split()[0] for line in after if line.startswith("  ") and line.split()]
            helps = [text] + [fmsim.cli([name, sub, "--help"])[1] for sub in subs]
            if any("--json" in h for h in helps):
                self.assertIn(name, fmsim.FUNCTIONS, f"fmsim {name} prints --json but has no Python function")
        self.assertIs(fmsim.FUNCTIONS["plan-serve"], fmsim.plan_serve)
        self.assertIs(fmsim.FUNCTIONS["run"], fmsim.run_job)

    def test_the_process_survives_many_errors(self):
        # In-process: a failing command must leave the interpreter and std::cout usable.
        for _ in range(50):
            with self.assertRaises(fmsim.InputError):
                fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:0")
        self.assertGreater(fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:1")["step_time_s"], 0)


class Tables(unittest.TestCase):
    def test_to_pandas(self):
        result = fmsim.collective(cluster="p5.48xlarge:2", min_bytes="1K", max_bytes="1M")
        rows = result["rows"]
        try:
            import pandas
        except ImportError:  # Debian's python3-pandas (DEB_TEST_PACKAGES) is not installed here
            with self.assertRaisesRegex(ImportError, "python3-pandas"):
                fmsim.to_pandas(result)
            self.assertEqual(len(fmsim._table(result)), 11)  # the rows the frame would hold
            return
        frame = fmsim.to_pandas(result)
        self.assertIsInstance(frame, pandas.DataFrame)
        # nccl-tests sizes double from 1 KiB to 1 MiB: 2^10 .. 2^20, eleven rows in order.
        self.assertEqual(len(frame), 11)
        self.assertEqual(list(frame["bytes"]), [2 ** k for k in range(10, 21)])
        self.assertTrue(pandas.api.types.is_numeric_dtype(frame["busbw_GBps"]))
        # One column per key of a row, each cell the row's value.
        self.assertEqual(set(frame.columns), set(rows[0].keys()))
        for i, row in enumerate(rows):
            for key, value in row.items():
                self.assertEqual(frame.iloc[i][key], value, f"row {i} column {key}")
        # busbw = algbw x the all-reduce factor 2(n-1)/n with n = 16 ranks, on every row.
        ratio = frame["busbw_GBps"] / frame["algbw_GBps"]
        self.assertTrue(((ratio - 2 * 15 / 16).abs() < 1e-3).all(), list(ratio))

    def test_to_pandas_flattens_a_document_and_a_list(self):
        try:
            import pandas  # noqa: F401
        except ImportError:
            self.skipTest("pandas (python3-pandas) is not installed")
        # A dict without a list of rows is one row; nested dicts become dotted columns.
        train = fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:2", tp=8, gbs=16)
        one = fmsim.to_pandas(train)
        self.assertEqual(len(one), 1)
        self.assertEqual(one["step_time_s"][0], train["step_time_s"])
        nested = [k for k, v in train.items() if isinstance(v, dict) and v and not any(isinstance(x, (dict, list))
                                                                                       for x in v.values())]
        self.assertTrue(nested, "train --json has a nested object")
        key = nested[0]
        for sub, value in train[key].items():
            self.assertEqual(one[f"{key}.{sub}"][0], value)
        # A list of dicts (the model presets) is one row per entry.
        presets = fmsim.models()
        frame = fmsim.to_pandas(presets)
        self.assertEqual(len(frame), len(presets))
        self.assertEqual(list(frame["name"]), [m["name"] for m in presets])


class DocumentedShapes(unittest.TestCase):
    # One call per function of the shapes table in docs/python.md.
    CALLS = {
        "train": lambda: fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:2", tp=8, gbs=16),
        "plan": lambda: fmsim.plan(model="llama3.1-8b", gpus=32, threads=2),
        "serve": lambda: fmsim.serve(model="llama3.1-8b", cluster="p5en.48xlarge", tp=1, isl=512, osl=128,
                                     num_requests=64),
        "plan_serve": lambda: fmsim.plan_serve(model="llama3.1-8b", precision="fp8", families="p5.48xlarge", isl=512,
                                               osl=128, rate=50, slo_ttft="1s", slo_tpot="40ms", probe_requests=60),
        "collective": lambda: fmsim.collective(cluster="p5.48xlarge:2"),
        "checkpoint": lambda: fmsim.checkpoint(params="70B", gpus=512, storage="fsx-persistent2-1000",
                                               capacity="120TiB"),
        "goodput": lambda: fmsim.goodput(gpus=1024, save_time="30s", replications=20),
        "run_job": lambda: fmsim.run_job(model="llama3.1-8b", cluster="p5.48xlarge:2", replications=20),
        "rl": lambda: fmsim.rl(policy="qwen3-8b", cluster="p5.48xlarge:4"),
        "cluster": lambda: fmsim.cluster(cluster="p5.48xlarge:4", synthetic=20),
        "topology": lambda: fmsim.topology("slurm", cluster="p5.48xlarge:4"),
        "catalog": lambda: fmsim.catalog("cluster", "p5.48xlarge:4"),
        "models": lambda: fmsim.models("show", "llama3.1-8b"),
        "validate": lambda: fmsim.validate("memory"),
    }

    def test_every_documented_key_is_returned(self):
        with open(os.path.join(SOURCE, "docs", "python.md")) as f:
            doc = f.read()
        table = doc[doc.index("<!-- shapes:begin -->"):doc.index("<!-- shapes:end -->")]
        rows = {}
        for line in table.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 2 and cells[0].startswith("`"):
                keys = cells[1].split(") ", 1)[-1] if cells[1].startswith("(") else cells[1]
                rows[cells[0].strip("`")] = [k.strip().strip("`") for k in keys.split(",")]
        self.assertEqual(set(rows), set(self.CALLS) | {"sweep"}, "every function has a row, every row a call")
        self.assertEqual(fmsim.API_VERSION, 1, "docs/python.md documents API_VERSION 1")
        for name, call in self.CALLS.items():
            result = call()
            missing = [k for k in rows[name] if k not in result]
            self.assertEqual(missing, [], f"fmsim.{name}() lacks documented keys")
        os.environ["FMSIM_EXECUTABLE"] = BINARY
        with tempfile.TemporaryDirectory() as tmp:
            grid = os.path.join(tmp, "g.yaml")
            with open(grid, "w") as f:
                f.write("kind: Sweep\ncommand: collective\nfixed: {cluster: 'p5.48xlarge:2', max-bytes: 1K}\n"
                        "grid: {op: [all_reduce, all_gather]}\ncolumns: [rows.0.time_us]\n")
            summary = fmsim.sweep(grid, out=os.path.join(tmp, "out"), jobs=1)
            self.assertEqual([k for k in rows["sweep"] if k not in summary], [])


class Example(unittest.TestCase):
    def test_example_script_runs(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run([sys.executable, os.path.join(SOURCE, "examples", "python_api.py")], cwd=tmp,
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("step time", r.stdout)

    def test_readme_block_prints_what_the_readme_says(self):
        """README.md's ```python block runs and each print prints what its trailing comment shows."""
        import contextlib
        import io
        import re
        with open(os.path.join(SOURCE, "README.md"), encoding="utf-8") as f:
            block = re.search(r"```python\n(.*?)```", f.read(), re.S).group(1)
        expected = [m.group(1).strip() for m in re.finditer(r"^print\(.*\)\s+#\s*(.+)$", block, re.M)]
        self.assertTrue(expected, "the README's Python block shows no printed output to check")
        try:
            import pandas  # noqa: F401
        except ImportError:  # python3-pandas (DEB_TEST_PACKAGES) not installed: the to_pandas line alone
            block = "\n".join(line for line in block.splitlines() if "to_pandas" not in line)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README.md", "exec"), {})  # noqa: S102 - the README's own example
        self.assertEqual(out.getvalue().splitlines(), expected)


if __name__ == "__main__":
    unittest.main()
