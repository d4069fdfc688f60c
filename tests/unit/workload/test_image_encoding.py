"""Generated images' bytes (workload/image_encoding.py): the JPEG spliced from a cached base and a fresh MCU row is
exactly the JPEG Pillow writes for the whole image, and decodes to the fresh rows on top of the base."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from llmload.workload.image_encoding import JPEG_ROWS, JpegBase, base_pixels, encode_jpeg, jpeg_base


@pytest.mark.parametrize(("width", "height"), [(64, 48), (100, 37), (16, 16), (17, 33), (1024, 20)])
def test_a_spliced_jpeg_is_the_jpeg_of_the_whole_image(width, height):
    base = jpeg_base(1, "v", width, height, 85)
    fresh = np.random.default_rng(width * height).integers(0, 256, size=(JPEG_ROWS, width, 3), dtype=np.uint8)
    whole = base_pixels(1, "v", width, height).copy()
    whole[:JPEG_ROWS] = fresh
    spliced = base.image(fresh)
    assert spliced == encode_jpeg(whole, 85)  # byte for byte: only the first MCU row's coded data differs
    pixels = _decoded(spliced)
    assert pixels.shape == (height, width, 3)
    assert np.abs(pixels[:JPEG_ROWS] - fresh).mean() < 60  # lossy, but the fresh noise (unrelated noise: ~85)
    below = JPEG_ROWS + 2  # the decoder smooths chroma across the row boundary: two rows take from above
    assert (pixels[below:] == _decoded(encode_jpeg(base_pixels(1, "v", width, height), 85))[below:]).all()


def _decoded(jpeg: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(jpeg)) as im:
        assert im.format == "JPEG"
        return np.asarray(im.convert("RGB"), dtype=np.int16)


def test_quality_is_the_jpegs_quality():
    fresh = np.zeros((JPEG_ROWS, 256, 3), np.uint8)
    low, high = (len(jpeg_base(2, "q", 256, 256, q).image(fresh)) for q in (20, 95))
    assert low < high / 2


def test_without_restart_markers_each_image_is_encoded_whole():
    """What an older Pillow (which ignores restart_marker_rows) gets: the same image, encoded whole each time."""
    pixels = base_pixels(1, "v", 64, 48)
    fresh = np.full((JPEG_ROWS, 64, 3), 200, np.uint8)
    whole = pixels.copy()
    whole[:JPEG_ROWS] = fresh
    assert JpegBase(b"", b"", 85, pixels).image(fresh) == encode_jpeg(whole, 85)
