"""fmsim from Python: the fmsim commands as functions returning plain dicts and lists.

Every function takes the same arguments as the command line, as keyword arguments
(``seq=8192`` is ``--seq 8192``, ``tp_overlap=True`` is ``--tp-overlap``, a list is joined with
commas), and returns what ``--json`` prints, parsed: the shapes are the CLI's JSON documents
(documented in docs/python.md; ``API_VERSION`` changes when one changes incompatibly). A job can
also be given as a job file path or a dict, ``job=...``. Bad input raises ``fmsim.InputError``
with the CLI's message (the flag or file and line, the field and what is allowed).

    >>> import fmsim
    >>> r = fmsim.train(model="llama3.1-8b", cluster="p5.48xlarge:4", tp=8, gbs=64)
    >>> round(r["step_time_s"], 3) > 0
    True
    >>> rows = fmsim.collective(cluster="p5.48xlarge:2", op="all_reduce")["rows"]
    >>> df = fmsim.to_pandas(rows)   # needs pandas

The commands run inside this process (fmsim._core), one at a time.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Iterable, Mapping

from . import _core

__all__ = [
    "API_VERSION",
    "FmsimError",
    "InputError",
    "InternalError",
    "FUNCTIONS",
    "catalog",
    "checkpoint",
    "cli",
    "cluster",
    "collective",
    "command",
    "commands",
    "compare",
    "goodput",
    "metrics",
    "models",
    "plan",
    "plan_serve",
    "rl",
    "run_job",
    "serve",
    "sweep",
    "to_pandas",
    "topology",
    "train",
    "validate",
]

#: Version of the returned shapes: bumped when a key is removed or changes meaning.
API_VERSION = 1


class FmsimError(Exception):
    """An fmsim command failed; ``status`` is the CLI's exit status, ``args[0]`` its message."""

    def __init__(self, message: str, status: int, command: list[str]):
        super().__init__(message)
        self.status = status
        self.command = command


class InputError(FmsimError, ValueError):
    """Bad input (the CLI's exit status 2): the message names the flag or file, the field and
    what is allowed, exactly as ``fmsim`` prints it after ``fmsim: error:``."""


class InternalError(FmsimError, RuntimeError):
    """A bug in fmsim (the CLI's exit status 70)."""


def cli(args: Iterable[str]) -> tuple[int, str, str]:
    """Run ``fmsim ARGS...`` in this process; returns (exit status, stdout, stderr)."""
    words = [str(a) for a in args]
    status, out, err = _core.run(words)
    return status, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _flag_words(kwargs: Mapping[str, Any]) -> list[str]:
    words: list[str] = []
    for key, value in kwargs.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            words.append(flag)
        elif isinstance(value, (list, tuple)):
            words += [flag, ",".join(str(v) for v in value)]
        else:
            words += [flag, str(value)]
    return words


def _message(err: str) -> str:
    lines = [line for line in err.splitlines() if line and not line.startswith("Run with --help")]
    text = "\n".join(lines)
    for prefix in ("fmsim: error: ", "fmsim: "):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def command(name: str, *positional: str, json_output: bool = True, catalog_files: Iterable[str] = (),
            **kwargs: Any) -> Any:
    """Run one fmsim command (``name`` may hold a subcommand: ``"validate training"``) with
    positional words and keyword flags; returns its parsed ``--json`` output.

    ``job=`` takes a job file path or a dict (written to a temporary YAML file for ``--job``).
    ``catalog_files=`` adds ``--catalog FILE`` before the command (extra GPUs, systems, fabrics).
    """
    words: list[str] = []
    for f in catalog_files:
        words += ["--catalog", str(f)]
    words += name.split() + [str(p) for p in positional]
    job = kwargs.pop("job", None)
    job_path = None
    try:
        if isinstance(job, Mapping):
            handle, job_path = tempfile.mkstemp(prefix="fmsim_job_", suffix=".yaml")
            with os.fdopen(handle, "w") as f:
                json.dump(dict(job), f)  # JSON is YAML
            kwargs["job"] = job_path
        elif job is not None:
            kwargs["job"] = os.fspath(job)
        words += _flag_words(kwargs)
        if json_output:
            words.append("--json")
        status, out, err = cli(words)
    finally:
        if job_path is not None:
            os.unlink(job_path)
    if status == 2:
        raise InputError(_message(err), status, words)
    if status not in (0, 1):
        raise (InternalError if status == 70 else FmsimError)(_message(err) or f"fmsim exited with {status}",
                                                              status, words)
    if not json_output:
        return out
    try:
        return json.loads(out)
    except json.JSONDecodeError as e:
        raise FmsimError(f"fmsim {name} printed no JSON ({e}): {out[:200]!r}", status, words) from None


def commands() -> list[str]:
    """The commands this build of fmsim has (``train``, ``plan``, ...)."""
    _, out, _ = cli(["--help"])
    names, in_list = [], False
    for line in out.splitlines():
        if line.strip().upper().startswith("SUBCOMMANDS"):
            in_list = True
            continue
        if in_list:
            if not line.startswith("  "):
                break
            names.append(line.split()[0])
    return names


def train(**kwargs: Any) -> dict:
    """``fmsim train``: step time, throughput, MFU and memory of one training job."""
    return command("train", **kwargs)


def plan(**kwargs: Any) -> dict:
    """``fmsim plan``: the best layouts and systems for a model and a GPU budget."""
    return command("plan", **kwargs)


def serve(**kwargs: Any) -> dict:
    """``fmsim serve``: inference serving predictions (where this build has the command)."""
    if "serve" not in commands():
        raise InputError("this build of fmsim has no 'serve' command; available: " + ", ".join(commands()), 2,
                         ["serve"])
    return command("serve", **kwargs)


def collective(**kwargs: Any) -> dict:
    """``fmsim collective``: nccl-tests-style rows of predicted collective times over sizes."""
    return command("collective", **kwargs)


def checkpoint(**kwargs: Any) -> dict:
    """``fmsim checkpoint``: checkpoint size, save/load times and the best interval."""
    return command("checkpoint", **kwargs)


def goodput(**kwargs: Any) -> dict:
    """``fmsim goodput``: failures, restarts and goodput of a long job (Monte Carlo)."""
    return command("goodput", **kwargs)


def run_job(**kwargs: Any) -> dict:
    """``fmsim run``: a training job end to end (step time, checkpoints, failures, cost)."""
    return command("run", **kwargs)


def plan_serve(**kwargs: Any) -> dict:
    """``fmsim plan-serve``: the cheapest serving deployments that meet the latency targets."""
    return command("plan-serve", **kwargs)


def rl(**kwargs: Any) -> dict:
    """``fmsim rl``: one RL (GRPO/PPO) step: rollout, training and weight sync; ``plan=True`` searches."""
    return command("rl", **kwargs)


def cluster(**kwargs: Any) -> dict:
    """``fmsim cluster``: a Slurm-scheduled cluster over a job trace: queues, waits, utilisation, goodput."""
    return command("cluster", **kwargs)


def topology(kind: str = "slurm", **kwargs: Any) -> dict:
    """``fmsim topology KIND`` (``slurm`` or ``k8s``): the network topology as scheduler configuration."""
    return command("topology " + kind, **kwargs)


def sweep(grid: str | os.PathLike, **kwargs: Any) -> dict:
    """``fmsim sweep GRID``: run a grid of points (local workers, or ``slurm=True``); the summary,
    with the paths of ``results.csv`` and ``results.jsonl``."""
    return command("sweep", os.fspath(grid), **kwargs)


def metrics(action: str, directory: str | os.PathLike, **kwargs: Any) -> Any:
    """``fmsim metrics ACTION DIR`` (``load``, ``report``): a run's metric series, as Prometheus
    blocks or an HTML report."""
    return command("metrics " + action, os.fspath(directory), **kwargs)


def compare(**kwargs: Any) -> dict:
    """``fmsim compare``: a real run's Prometheus series against the prediction."""
    return command("compare", **kwargs)


def validate(what: str, **kwargs: Any) -> dict:
    """``fmsim validate WHAT`` (``training``, ``collectives``): predictions vs published data."""
    return command("validate " + what, **kwargs)


def catalog(what: str = "systems", *names: str, **kwargs: Any) -> Any:
    """``fmsim catalog WHAT``: ``gpus``, ``systems``, ``fabrics``, ``storage`` (lists of dicts),
    ``show NAME`` or ``cluster SYSTEM:COUNT``."""
    return command("catalog", what, *names, **kwargs)


def models(*words: str, **kwargs: Any) -> Any:
    """``fmsim models``: the model presets (a list of dicts); ``models("show", NAME)`` for one."""
    return command("models", *words, **kwargs)


#: The function for each command that prints ``--json`` (the test checks that every such command
#: of the build has one). ``command()`` runs any of them by name too.
FUNCTIONS = {
    "catalog": catalog,
    "checkpoint": checkpoint,
    "cluster": cluster,
    "collective": collective,
    "compare": compare,
    "goodput": goodput,
    "metrics": metrics,
    "models": models,
    "plan": plan,
    "plan-serve": plan_serve,
    "rl": rl,
    "run": run_job,
    "serve": serve,
    "sweep": sweep,
    "topology": topology,
    "train": train,
    "validate": validate,
}


def _table(result: Any) -> list:
    if isinstance(result, list):
        return result
    if isinstance(result, Mapping):
        for key in ("rows", "results", "layouts", "candidates"):
            if isinstance(result.get(key), list):
                return result[key]
        for value in result.values():
            if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
                return value
        return [result]
    raise TypeError(f"cannot make a table of {type(result).__name__}")


def to_pandas(result: Any):
    """A pandas DataFrame of a result's table: a list of dicts as is, a dict's ``rows`` (or its
    first list of dicts), or one dict as one row. Nested dicts become dotted columns."""
    try:
        import pandas
    except ImportError:
        raise ImportError("fmsim.to_pandas needs pandas (Debian: apt-get install python3-pandas)") from None
    return pandas.json_normalize(_table(result))
