"""Image inputs per class: the images successful requests carried and their request bytes, per second.

Over successful requests that carried images (``RequestRecord.images`` > 0: an image class,
:mod:`llmload.workload.images`): how many, their images and their request bodies' bytes (the images'
base64 data URIs and the JSON around them). ``images`` are the images *sent*: every image a request
carried, a conversation's history included (each turn re-sends the earlier turns' images), which is
what the server received, decoded and charged and what the bytes weigh; the *new* images (first sent
by a request: a conversation's first turn, or every user turn with ``every_turn``) follow from the
profile (docs/workloads.md, "Images sent and new images"). For a single-request class both are the same. Summary key ``images`` (only in a class that sent images: other
classes' keys do not change)::

    "images": {"requests": 20, "images": 40, "images_per_request": 2.0, "images_per_s": 4.0,
               "request_bytes": 15800000, "request_bytes_per_s": 1580000.0}

The image tokens are in the class's prompt tokens as the server counted them (``usage.prompt_tokens``);
TTFT with and without images: the classes' own rows. Counters ``llmload_image_inputs`` /
``llmload_image_request_bytes``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypedDict

from llmload.metrics.latency import rnd
from llmload.metrics.parts.contract import Context, Exported, Json, Seen
from llmload.metrics.record import RequestRecord

__all__ = ["ImageFigures", "ImageInputs", "ImageInputsWire"]


class ImageInputsWire(TypedDict):
    n: int  # successful requests with images
    i: int  # their images
    b: int  # their request bytes


@dataclass(frozen=True, slots=True)
class ImageFigures:
    key: ClassVar[str] = "images"
    requests: int = 0
    images: int = 0
    request_bytes: int = 0
    images_per_s: float = 0.0
    request_bytes_per_s: float = 0.0

    def to_dict(self) -> dict[str, Json]:
        if not self.requests:
            return {}
        return {"images": {"requests": self.requests, "images": self.images,
                           "images_per_request": rnd(self.images / self.requests, 2),
                           "images_per_s": rnd(self.images_per_s), "request_bytes": self.request_bytes,
                           "request_bytes_per_s": rnd(self.request_bytes_per_s)}}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ImageFigures:
        e = d.get("images") or {}
        return cls(int(e.get("requests") or 0), int(e.get("images") or 0), int(e.get("request_bytes") or 0),
                   float(e.get("images_per_s") or 0.0), float(e.get("request_bytes_per_s") or 0.0))  # fmt: skip

    def console_lines(self, users_max: int) -> list[str]:
        if not self.requests:
            return []
        mb = self.request_bytes / self.requests / 1e6
        return [f"images: {self.images_per_s:.1f} images/s ({self.images / self.requests:g} per request), "
                f"{self.request_bytes_per_s / 1e6:.2f} MB/s sent ({mb:.2f} MB per request)"]  # fmt: skip


class ImageInputs:
    __slots__ = ("images", "request_bytes", "requests")
    key: ClassVar[str] = "images"
    order: ClassVar[int] = 87
    figures: ClassVar[type[ImageFigures]] = ImageFigures
    exported: ClassVar[tuple[Exported, ...]] = (
        Exported("image_inputs", "Images carried by successful requests (a conversation's history included)",
                 lambda p: p.images),
        Exported("image_request_bytes", "Request body bytes of successful requests with images",
                 lambda p: p.request_bytes),
    )  # fmt: skip

    def __init__(self) -> None:
        self.requests = self.images = self.request_bytes = 0

    def add(self, rec: RequestRecord, seen: Seen) -> None:
        if rec.images and rec.outcome == "ok":
            self.requests += 1
            self.images += rec.images
            self.request_bytes += rec.request_bytes

    def merge(self, other: ImageInputs) -> None:
        self.requests += other.requests
        self.images += other.images
        self.request_bytes += other.request_bytes

    @property
    def empty(self) -> bool:
        return not self.requests

    def to_wire(self) -> ImageInputsWire:
        return {"n": self.requests, "i": self.images, "b": self.request_bytes}

    @classmethod
    def from_wire(cls, wire: ImageInputsWire) -> ImageInputs:
        p = cls()
        p.requests, p.images, p.request_bytes = int(wire.get("n", 0)), int(wire.get("i", 0)), int(wire.get("b", 0))
        return p

    def result(self, ctx: Context) -> ImageFigures:
        return ImageFigures(self.requests, self.images, self.request_bytes, ctx.per_s(self.images),
                            ctx.per_s(self.request_bytes))  # fmt: skip


PART = ImageInputs
