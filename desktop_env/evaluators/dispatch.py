"""EVAL_DISPATCH: whole evaluators of the func/arguments spelling, as thin adapters over the metrics."""
from __future__ import annotations

import inspect
import logging
from pathlib import Path, PurePosixPath

from desktop_env.session import SetupContext
from desktop_env.evaluators.getters.file import get_vm_file, get_vm_script_output
from desktop_env.evaluators.metrics import general
from desktop_env.evaluators.reasons import INFEASIBLE, fail
from desktop_env.errors import TaskConfigError
from desktop_env.registry import EVAL_DISPATCH, METRICS

logger = logging.getLogger(__name__)

_KW = inspect.Parameter.KEYWORD_ONLY

#: metrics comparing a VM file (``vm_result``) with a task file (``local_expected``)
FILE_VS_FILE = (
    "compare_csv", "compare_table", "compare_json_file", "compare_text_file", "diff_text_file",
    "compare_notebook_outputs", "compare_notebook_cells", "compare_ipynb_files", "compare_images",
    "compare_jupyterlab_images", "compare_metabase_images", "check_local_database", "compare_sql",
)
#: metrics checking a VM file (``vm_result``) against rules given inline (``expected``)
FILE_VS_RULES = ("check_yaml_file", "is_jupyter_cell_executed", "are_jupyter_outputs_cleared")


def fetch_vm_result(agent: SetupContext, vm_result: str) -> Path | None:
    """Copy ``vm_result`` out of the VM into the cache; its local path, or None when it is missing."""
    return get_vm_file(agent, vm_result, PurePosixPath(vm_result).name or "result")


def _metric_options(metric_name: str) -> list[inspect.Parameter]:
    params = list(inspect.signature(METRICS.entries[metric_name].func).parameters.values())[2:]
    return [p.replace(kind=_KW) for p in params if p.kind is not p.VAR_KEYWORD]


def _file_vs_file(metric_name: str):
    metric = METRICS.entries[metric_name].func
    needs_expected = inspect.signature(metric).parameters["expected"].default is inspect.Parameter.empty

    def evaluator(task, agent: SetupContext, vm_result: str, local_expected: str | None = None, **options) -> float:
        result = fetch_vm_result(agent, vm_result)
        expected = None if local_expected is None else agent.resolve(local_expected)
        return float(metric(result, expected, **options))
    evaluator.__signature__ = inspect.Signature(
        [inspect.Parameter("task", _KW), inspect.Parameter("agent", _KW), inspect.Parameter("vm_result", _KW),
         inspect.Parameter("local_expected", _KW, **({} if needs_expected else {"default": None}))]
        + _metric_options(metric_name))
    evaluator.__name__ = metric_name
    evaluator.__doc__ = (f"Fetch ``vm_result`` from the VM and score it against the task file ``local_expected`` "
                         f"with the metric {metric_name!r}.")
    return evaluator


def _file_vs_rules(metric_name: str):
    metric = METRICS.entries[metric_name].func

    def evaluator(task, agent: SetupContext, vm_result: str, expected=None, **options) -> float:
        return float(metric(fetch_vm_result(agent, vm_result), expected, **options))
    evaluator.__signature__ = inspect.Signature(
        [inspect.Parameter("task", _KW), inspect.Parameter("agent", _KW), inspect.Parameter("vm_result", _KW),
         inspect.Parameter("expected", _KW, default=None)] + _metric_options(metric_name))
    evaluator.__name__ = metric_name
    evaluator.__doc__ = f"Fetch ``vm_result`` from the VM and check it against ``expected`` with {metric_name!r}."
    return evaluator


def _options_check(metric_name: str, own: tuple[str, ...]):
    """The metric's load-time option check, applied to an evaluator's arguments less its own (``own``)."""
    check = METRICS.entries[metric_name].check
    if check is None:
        return None
    return lambda fields: check({k: v for k, v in fields.items() if k not in own})


for _m in FILE_VS_FILE:
    EVAL_DISPATCH.register(_m, host_paths=("local_expected",), check=_options_check(_m, ("vm_result", "local_expected"))
                           )(_file_vs_file(_m))
for _m in FILE_VS_RULES:
    EVAL_DISPATCH.register(_m, check=_options_check(_m, ("vm_result", "expected")))(_file_vs_rules(_m))


@EVAL_DISPATCH.register("check_include_exclude", host_paths=("vm_script",))
def eval_check_include_exclude(task, agent: SetupContext, include: list | None = None, exclude: list | None = None,
                               vm_script: str | None = None, vm_script_dest: str = "/tmp/eval.sh",
                               command=None, shell: bool = False) -> float:
    """Run the task's ``vm_script`` (copied to ``vm_script_dest``) or ``command`` in the VM and check its output
    contains every ``include`` string and no ``exclude`` one."""
    if (vm_script is None) == (command is None):
        raise TaskConfigError("check_include_exclude needs exactly one of vm_script or command",
                              field="evaluation.arguments")
    if vm_script is not None:
        output = get_vm_script_output(agent, vm_script, vm_script_dest)
    else:
        output = agent.controller.execute(command, shell=shell).get("output") or ""
    return general.check_include_exclude(output, {"include": include or [], "exclude": exclude or []})


@EVAL_DISPATCH.register("check_file_existence")
def eval_check_file_existence(task, agent: SetupContext, vm_result: str) -> float:
    """1 when ``vm_result`` exists in the VM."""
    return general.check_file_existence(fetch_vm_result(agent, vm_result))


@EVAL_DISPATCH.register("infeasible")
def eval_infeasible(task, agent: SetupContext) -> float:
    """Marker: the evaluator scores 1 only when the agent's last action was FAIL."""
    return fail(INFEASIBLE, "the task is infeasible, and the agent did not answer FAIL")
