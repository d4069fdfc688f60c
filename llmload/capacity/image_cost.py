"""A class's images in token counts, as the simulator charges them to prefill.

The simulator (:mod:`llmload.sim.image_parts`) counts every image part a request carries as
``ceil(W / 28) * ceil(H / 28)`` prompt tokens (:func:`~llmload.sim.image_parts.patch_tokens`),
prefilled like text. So, for predict, a user message's images are that many more tokens of its
prompt (:class:`ImageCost`): ``count`` images of the class's ``width`` x ``height``, or, with
``path``, ``count`` files drawn per message among the folder's (each its own size, read once
with Pillow). Where they go is :mod:`llmload.capacity.session_replay`'s: with the first user
message of a session (and every user message with ``every_turn``), never with tool results;
the history's images are re-sent with every later turn, so they stay in the prompt, at the same
place, where the prefix cache serves them as the simulator's does (an image's tokens are the same
where it is re-sent). Only the chat, Responses and Messages APIs send images: a completions
run sends the text alone (predict models the chat form).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from llmload.errors import ConfigError
from llmload.sim.image_parts import patch_tokens
from llmload.workload.images import ImageSpec

__all__ = ["ImageCost", "image_cost"]

_SUFFIXES = (".png", ".jpg", ".jpeg")


@dataclass(frozen=True, slots=True)
class ImageCost:
    """``count`` images per user message, each one of ``tokens`` (drawn among them when there are several)."""

    count: int
    tokens: tuple[int, ...]
    every_turn: bool = False

    def draw(self, rng: random.Random) -> int:
        """The prompt tokens of one user message's new images."""
        t = self.tokens
        if len(t) == 1:
            return self.count * t[0]
        return sum(t[rng.randrange(len(t))] for _ in range(self.count))

    @property
    def most(self) -> int:
        """The most tokens one user message's images can cost."""
        return self.count * max(self.tokens)


def image_cost(spec: ImageSpec, where: str) -> ImageCost:
    """A class's :class:`~llmload.workload.images.ImageSpec` as tokens; an unreadable image file: one error line."""
    if spec.path is None:
        return ImageCost(spec.count, (patch_tokens(spec.width, spec.height),), spec.every_turn)
    return ImageCost(spec.count, _file_tokens(spec.path, where), spec.every_turn)


def _file_tokens(path: Path, where: str) -> tuple[int, ...]:
    from PIL import Image  # here: only a profile with image files needs Pillow

    files = sorted(path.iterdir()) if path.is_dir() else [path]
    out = []
    for f in files:
        if f.suffix.lower() not in _SUFFIXES:
            continue
        try:
            with Image.open(f) as im:
                out.append(patch_tokens(*im.size))
        except (OSError, ValueError) as e:
            raise ConfigError(f"{where}: image file '{f}' does not open ({e}); fix or remove it") from None
    if not out:
        raise ConfigError(f"{where}: no .png, .jpg or .jpeg file at '{path}'")
    return tuple(out)
