"""Task files: the spec (:mod:`.spec`), its name checks (:mod:`.names`), finding and loading tasks and
index files (:mod:`.suites`), and what they share (:mod:`.common`).

The names below are the package's public API; ``from desktop_env.tasks import load_task`` is the usual
entry.
"""
from desktop_env.tasks.common import (ACCOUNT_TAG, CATEGORIES, GUIDANCES, INDEX_NAMES, INTERFACES,
                                      RUNTIME_CACHE_PREFIX, SPELLING_FUNC, SPELLING_TYPE, VERBOSE_FILE,
                                      TaskFileNotFound, find_suite_root, is_placeholder, is_remote_url,
                                      runtime_cache_part, strip_file_scheme)
from desktop_env.tasks.spec import EvaluatorSpec, GetterSpec, StepSpec, TaskSpec
from desktop_env.tasks.suites import (find_task_files, is_task_file, load_index, load_task, load_tasks_from_index,
                                      read_json_file, task_file_for)

__all__ = ["ACCOUNT_TAG", "CATEGORIES", "GUIDANCES", "INDEX_NAMES", "INTERFACES", "RUNTIME_CACHE_PREFIX",
           "SPELLING_FUNC", "SPELLING_TYPE", "VERBOSE_FILE", "EvaluatorSpec", "GetterSpec", "StepSpec", "TaskSpec",
           "TaskFileNotFound", "find_suite_root", "find_task_files", "is_placeholder", "is_remote_url",
           "is_task_file", "load_index", "load_task", "load_tasks_from_index", "read_json_file",
           "runtime_cache_part", "strip_file_scheme", "task_file_for"]
