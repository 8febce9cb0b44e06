"""Peak dense FP16/BF16 TFLOPS and memory bandwidth of the main products (config/products.toml).

Owns: `ProductPeak`, `load_products()` and `find_product()` (device name as
torch.cuda.get_device_name() reports it -> the product's peaks). Must not: import anything but
the standard library, `rocmforge.knowledge.toml_files` and `rocmforge.errors`, because the verify
suite imports this module inside a bare venv that has only the freshly built torch.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocmforge.errors import ConfigError
from rocmforge.knowledge.toml_files import check_keys, config_dir, expect_type, read_toml

PRODUCTS_FILE = "products.toml"

_REQUIRED = ("arch", "match", "fp16_tflops", "bf16_tflops", "bandwidth_gbs", "estimate", "source")
_OPTIONAL = ("devices", "arch_fallback")


@dataclass(frozen=True, kw_only=True)
class ProductPeak:
    """Peak numbers of one product; dense (no sparsity), for the whole product."""

    name: str
    arch: str
    """LLVM target ("gfx942") or, for NVIDIA, the CUDA arch ("sm_90")."""
    fp16_tflops: float
    bf16_tflops: float
    bandwidth_gbs: float
    """Peak memory bandwidth in GB/s (10**9 bytes per second)."""
    estimate: bool
    """Derived, or not verified against a vendor document: treat ratios against it loosely."""
    source: str
    match: tuple[str, ...] = ()
    """Device-name fragments (lower case, letters and digits only) that identify the product."""
    devices: int = 1
    """Logical devices the product appears as (MI250X: 2, one per GCD)."""
    arch_fallback: bool = False
    """Match on the arch alone when the device name is generic (APUs)."""

    def per_device(self) -> ProductPeak:
        """The peaks of one logical device (a product that shows as N devices gets 1/N)."""
        if self.devices == 1:
            return self
        share = 1.0 / self.devices
        return dataclasses.replace(
            self,
            name=f"{self.name} (one of {self.devices} devices)",
            fp16_tflops=self.fp16_tflops * share,
            bf16_tflops=self.bf16_tflops * share,
            bandwidth_gbs=self.bandwidth_gbs * share,
            devices=1,
        )


def load_products(directory: str | Path | None = None) -> tuple[ProductPeak, ...]:
    """All products of products.toml, in file order (cached per resolved directory)."""
    return _load_cached(config_dir(directory).resolve())


def find_product(
    device_name: str,
    arch: str = "",
    *,
    products: tuple[ProductPeak, ...] | None = None,
) -> ProductPeak | None:
    """The product a device name belongs to ("AMD Instinct MI300X", "NVIDIA H200"), or None.

    The longest matching name fragment wins (so "MI250X / MI250" is the MI250X). `arch`
    ("gfx942:sramecc+:xnack-" is fine) narrows the choice, and lets an APU with a generic name
    ("AMD Radeon Graphics") match when exactly one product of that arch allows it.
    """
    catalogue = load_products() if products is None else products
    name = _squash(device_name)
    base = arch.split(":", 1)[0].strip().lower()
    best: tuple[int, ProductPeak] | None = None
    for product in catalogue:
        if base and product.arch != base:
            continue
        for fragment in product.match:
            if fragment in name and (best is None or len(fragment) > best[0]):
                best = (len(fragment), product)
    if best is not None:
        return best[1]
    if base:
        same_arch = [product for product in catalogue if product.arch == base]
        if len(same_arch) == 1 and same_arch[0].arch_fallback:
            return same_arch[0]
    return None


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@functools.lru_cache(maxsize=16)
def _load_cached(directory: Path) -> tuple[ProductPeak, ...]:
    path = directory / PRODUCTS_FILE
    doc = read_toml(path)
    check_keys(doc, where=str(path), required=("product",))
    table = expect_type(doc["product"], dict, where=f"{path}: [product]")
    return tuple(
        _product(name, raw, where=f'{path}: [product."{name}"]') for name, raw in table.items()
    )


def _product(name: str, raw: Any, *, where: str) -> ProductPeak:
    expect_type(raw, dict, where=where)
    check_keys(raw, where=where, required=_REQUIRED, optional=_OPTIONAL)
    numbers = {}
    for key in ("fp16_tflops", "bf16_tflops", "bandwidth_gbs"):
        value = float(expect_type(raw[key], (int, float), where=f"{where}.{key}"))
        if value <= 0:
            raise ConfigError(f"{where}.{key} is {value}", "a peak must be positive",
                              "write the vendor's dense figure")
        numbers[key] = value
    fragments = expect_type(raw["match"], list, where=f"{where}.match")
    for index, fragment in enumerate(fragments):
        expect_type(fragment, str, where=f"{where}.match[{index}]")
        if not fragment or _squash(fragment) != fragment:
            raise ConfigError(
                f"{where}.match[{index}] is {fragment!r}",
                "device names are compared lower case with only letters and digits kept",
                f"write it as {_squash(fragment)!r}",
            )
    devices = expect_type(raw.get("devices", 1), int, where=f"{where}.devices")
    if devices < 1:
        raise ConfigError(f"{where}.devices is {devices}", "a product is at least one device",
                          "write 1 or more")
    return ProductPeak(
        name=name,
        arch=expect_type(raw["arch"], str, where=f"{where}.arch"),
        fp16_tflops=numbers["fp16_tflops"],
        bf16_tflops=numbers["bf16_tflops"],
        bandwidth_gbs=numbers["bandwidth_gbs"],
        estimate=expect_type(raw["estimate"], bool, where=f"{where}.estimate"),
        source=expect_type(raw["source"], str, where=f"{where}.source"),
        match=tuple(fragments),
        devices=devices,
        arch_fallback=expect_type(raw.get("arch_fallback", False), bool,
                                  where=f"{where}.arch_fallback"),
    )
