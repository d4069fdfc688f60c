"""Deterministic random-weight GGUF models with a real byte-level BPE tokenizer, for llama-server.

No model hub is reachable from the test machines, so the test setup makes its own model:

* a byte-level BPE tokenizer (GPT-2 style, the kind llama.cpp calls ``gpt2``) trained with the
  PyPI ``tokenizers`` package on a fixed local corpus: the top-level modules of this
  interpreter's standard library, in sorted order (:func:`corpus_files`);
* a ``llama``-architecture GGUF written with the PyPI ``gguf`` package: random weights from a
  fixed seed, f16 matrices, ChatML chat template, special tokens ``<|endoftext|>``,
  ``<|im_start|>``, ``<|im_end|>`` (ids 0, 1, 2).

The output projection is scaled so that logits spread widely (std ~4) and its rows for the
special tokens are zero: a zero logit is then far below llama.cpp's top-k (40) cut, so EOS
is never sampled and every answer runs to ``max_tokens``.

Sizes (:data:`SIZES`): ``tiny`` (hidden 256, 4 layers, ~7.6 M parameters, ~15 MB: so fast
that HTTP dominates) and ``88m`` (hidden 768, 12 layers, 12 heads, 4 KV heads, ffn 2048,
~88 M parameters, ~177 MB: a real per-token cost). Files are cached under
``${XDG_CACHE_HOME:-~/.cache}/llmload/models/`` named by a hash of every generator setting
and of the corpus bytes, written to a temporary name and renamed into place (atomic), so a
second session reuses them and an interrupted one leaves nothing half-written.

Usage: ``python -m tests.engines.make_gguf tiny [88m]`` prints each model's path.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import sysconfig
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["SIZES", "SPECIAL_TOKENS", "ModelSpec", "cache_dir", "corpus_files", "ensure_model", "model_path"]

#: Bump when the generator's output changes for the same settings.
GENERATOR_VERSION = 1
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
VOCAB_SIZE = 8192
MIN_FREQUENCY = 2
SEED = 20261201
CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


@dataclass(frozen=True)
class ModelSpec:
    name: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    ffn: int
    context: int = 32768


SIZES: dict[str, ModelSpec] = {
    "tiny": ModelSpec("tiny", hidden=256, layers=4, heads=4, kv_heads=4, ffn=768),
    "88m": ModelSpec("88m", hidden=768, layers=12, heads=12, kv_heads=4, ffn=2048),
}


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "llmload"


def corpus_files() -> list[Path]:
    """The tokenizer's training corpus: this interpreter's top-level stdlib modules, sorted."""
    return sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))


def _corpus_digest(files: list[Path]) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def _key(spec: ModelSpec, corpus_digest: str) -> str:
    settings = {
        "generator": GENERATOR_VERSION,
        "spec": asdict(spec),
        "vocab": VOCAB_SIZE,
        "min_frequency": MIN_FREQUENCY,
        "special": SPECIAL_TOKENS,
        "seed": SEED,
        "template": CHATML,
        "corpus": corpus_digest,
    }
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]


def model_path(size: str) -> Path:
    spec = SIZES[size]
    return cache_dir() / "models" / f"llmload-{spec.name}-{_key(spec, _corpus_digest(corpus_files()))}.gguf"


def train_tokenizer(files: list[Path]):
    """Byte-level BPE trained on ``files`` with fixed settings (deterministic for the same corpus)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        min_frequency=MIN_FREQUENCY,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator((f.read_text(encoding="utf-8", errors="replace") for f in files), trainer)
    return tok


def _vocab_and_merges(tok) -> tuple[list[str], list[str]]:
    model = json.loads(tok.to_str())["model"]
    by_id = sorted(model["vocab"].items(), key=lambda kv: kv[1])
    tokens = [t for t, _ in by_id]
    assert [i for _, i in by_id] == list(range(len(tokens))), "tokenizer ids are not contiguous"
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    return tokens, merges


def write_gguf(spec: ModelSpec, tok, path: Path) -> None:
    import gguf
    import numpy as np

    tokens, merges = _vocab_and_merges(tok)
    n_vocab, d, head_dim = len(tokens), spec.hidden, spec.hidden // spec.heads
    rng = np.random.default_rng(SEED)

    def mat(rows: int, cols: int, std: float) -> np.ndarray:
        return (rng.standard_normal((rows, cols), dtype=np.float32) * std).astype(np.float16)

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(f"llmload-random-{spec.name}")
    w.add_context_length(spec.context)
    w.add_embedding_length(d)
    w.add_block_count(spec.layers)
    w.add_feed_forward_length(spec.ffn)
    w.add_head_count(spec.heads)
    w.add_head_count_kv(spec.kv_heads)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(n_vocab)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    specials = {tok.token_to_id(s) for s in SPECIAL_TOKENS}
    w.add_token_types([gguf.TokenType.CONTROL if i in specials else gguf.TokenType.NORMAL for i in range(n_vocab)])
    w.add_token_merges(merges)
    w.add_bos_token_id(tok.token_to_id("<|endoftext|>"))
    w.add_eos_token_id(tok.token_to_id("<|im_end|>"))
    w.add_pad_token_id(tok.token_to_id("<|endoftext|>"))
    w.add_add_bos_token(False)
    w.add_chat_template(CHATML)

    kv = spec.kv_heads * head_dim
    ones = np.ones(d, dtype=np.float32)
    w.add_tensor("token_embd.weight", mat(n_vocab, d, 1.0))
    for i in range(spec.layers):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", ones)
        w.add_tensor(p + "attn_q.weight", mat(d, d, d**-0.5))
        w.add_tensor(p + "attn_k.weight", mat(kv, d, d**-0.5))
        w.add_tensor(p + "attn_v.weight", mat(kv, d, d**-0.5))
        w.add_tensor(p + "attn_output.weight", mat(d, d, 0.02))
        w.add_tensor(p + "ffn_norm.weight", ones)
        w.add_tensor(p + "ffn_gate.weight", mat(spec.ffn, d, d**-0.5))
        w.add_tensor(p + "ffn_up.weight", mat(spec.ffn, d, d**-0.5))
        w.add_tensor(p + "ffn_down.weight", mat(d, spec.ffn, 0.02))
    w.add_tensor("output_norm.weight", ones)
    out = mat(n_vocab, d, 4.0 * d**-0.5)  # logits std ~4 after the RMS norm
    out[sorted(specials)] = 0  # a zero logit never reaches the top-k: EOS is never sampled
    w.add_tensor("output.weight", out)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def ensure_model(size: str) -> Path:
    """The cached GGUF of ``size``, made first if absent (and its ``tokenizer.json`` beside it)."""
    path = model_path(size)
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / ".make.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another session making the same file: wait, then reuse it
        if path.exists():
            return path
        tok = train_tokenizer(corpus_files())
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            write_gguf(SIZES[size], tok, tmp)
            tok.save(str(path.with_suffix(".tokenizer.json")))
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    return path


if __name__ == "__main__":
    for arg in sys.argv[1:] or ["tiny"]:
        if arg not in SIZES:
            sys.exit(f"make_gguf: unknown size {arg!r}; choose from {', '.join(SIZES)}")
        print(ensure_model(arg))
