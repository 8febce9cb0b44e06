"""kpack: device code split out of host libraries into per-architecture `.kpack` archives.

TheRock's multi-arch packages keep host-only libraries whose `.hip_fatbin` is NOBITS and which
carry a `.rocm_kpack_ref` section, and ship the code objects in `.kpack` archives (one per
target) in separate device packages that overlay the host package's folders. Format, as the
upstream code writes and reads it (ROCm/rocm-kpack@e3483286e751060b3a70b792792cc122632c66e8):

- marker (`python/rocm_kpack/elf/kpack_transform.py` `add_kpack_ref_section`,
  `runtime/src/loader.cpp` `parse_hipk_metadata`): MessagePack map
  `{"kernel_name": str, "kpack_search_paths": [str, ...]}`; each search path is relative to
  the binary's folder, and `@GFXARCH@` in it stands for a target (`../.kpack/torch_@GFXARCH@.kpack`,
  `artifact_splitter.py` `compute_kpack_search_pattern`);
- archive (`python/rocm_kpack/kpack.py` `PackedKernelArchive`, `runtime/src/archive.cpp`,
  `runtime/src/toc_parser.cpp`): 16-byte header `<4sIQ` = b"KPAK", format version 1, TOC
  offset; blobs from the next 64-byte boundary; a MessagePack TOC at the TOC offset holding
  `gfx_arches`, `compression_scheme` ("none": `blobs` [{offset, size}], absolute offsets;
  "zstd-per-kernel": `zstd_offset`, `zstd_size` of a region `<I` count then `<I` size + one
  zstd frame per kernel, `compression.py` `ZstdCompressor`) and `toc`:
  {binary key: {target ID: {"type": "hsaco", "ordinal": n, "original_size": n}}}. A binary key
  is the marker's `kernel_name` plus `#<index>` (`loader.cpp`: `kernel_name + "#" + co_index`);
- placement (ROCm/TheRock@89553ce3746eda74ade42557470d25e37c91b6f0:
  docs/rfcs/RFC0008-Multi-Arch-Packaging.md §9): a device wheel holds
  `torch/.kpack/torch_gfx942.kpack`, overlaying the host wheel's `torch/`;
- device packages (ROCm/TheRock@89553ce3:RELEASES.md, "Installing multi-arch PyTorch Python
  packages": `pip install "torch[device-gfx1100]"` installs `amd-torch-device-gfx1100`, and
  `torchvision[device-...]` the `amd-torchvision-device-*` ones;
  build_tools/github_actions/tests/publish_pytorch_to_release_bucket_test.py: the wheel file
  `amd_torch_device_gfx942-2.10.0-py3-none-linux_x86_64.whl`; the ROCm SDK's
  `rocm[device-gfx...]` -> `rocm-sdk-device-gfx...`, config/rocm_sdk.toml).

Owns: decoding a marker and an archive's header and TOC (with the `msgpack` library), and
checking each entry's code-object header against its target, reading only the TOC and the
first bytes of each blob (for zstd, the first bytes the frame inflates to); the sentence that
says which archive a split library lacks for a target, and which package holds it.
Must not: open files, print, or read a blob whole.
"""

from __future__ import annotations

import os.path
import posixpath
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType

from rocmforge.errors import RocmforgeError
from rocmforge.inspect.bundle_records import (
    AMDGPU_TRIPLE,
    Bundle,
    BundleFormatError,
    CodeObjectCheck,
    MachName,
    Row,
    parse_entry_id,
)
from rocmforge.inspect.byte_source import ByteSource
from rocmforge.inspect.code_object_check import check_code_object

MAGIC = b"KPAK"
VERSION = 1
HEADER = struct.Struct("<4sIQ")
ARCH_PLACEHOLDER = "@GFXARCH@"
SUFFIX = ".kpack"
_HEAD = 64  # code-object header bytes checked per entry
_ZSTD_PREFIX = 4096  # compressed bytes fed to inflate a frame's first 64 bytes
_MAX_TOC = 256 << 20


class KpackFormatError(RocmforgeError):
    """A marker or archive that does not follow the kpack format (or cannot be decoded here)."""


def _msgpack() -> ModuleType:
    """The msgpack module, loaded when a marker or archive is met (a kit dependency; a bare
    venv without it gets a FAIL row saying so, not a traceback)."""
    try:
        import msgpack
    except ImportError:
        raise KpackFormatError("the msgpack module is not installed in this Python, so kpack "
                               "tables cannot be decoded (pip install msgpack)") from None
    return msgpack


@dataclass(frozen=True, kw_only=True)
class KpackRef:
    """A host library's `.rocm_kpack_ref` marker."""

    kernel_name: str
    search_paths: tuple[str, ...]


def archive_paths(library: str, ref: KpackRef, target: str) -> tuple[str, ...]:
    """Where the marker of `library` (a path, or `wheel!member`) puts its archive for `target`:
    each search path with the target's processor for `@GFXARCH@`, from the library's folder
    (inside its wheel: the member path the device wheel would add)."""
    base = target.split(":", 1)[0]
    wheel, bang, member = library.rpartition("!")
    out: list[str] = []
    for search in ref.search_paths:
        name = search.replace(ARCH_PLACEHOLDER, base)
        if bang:
            out.append(posixpath.normpath(posixpath.join(posixpath.dirname(member), name)))
        else:
            out.append(os.path.normpath(os.path.join(os.path.dirname(library), name)))
    return tuple(dict.fromkeys(out))


def missing_archive_cause(library: str, ref: KpackRef, target: str,
                          unreadable: tuple[str, ...]) -> str:
    """Why a kpack-split library lacks `target`, and the fix: its archive for the target cannot
    be read, or no archive for it was given (the device package that holds it)."""
    wanted = archive_paths(library, ref, target)
    names = {posixpath.basename(w.replace(os.sep, "/")) for w in wanted}
    broken = [u for u in unreadable if u.replace(os.sep, "/").rsplit("/", 1)[-1] in names]
    head = f"{library} keeps its device code in kpack archives (TheRock multi-arch) and "
    if broken:
        return (f"{head}its {target} archive {broken[0]} cannot be read (its FAIL row). Fix: "
                "download or reinstall that device package")
    return (f"{head}no archive for {target} was given or found ({' or '.join(wanted)}). "
            f"Fix: {_device_package(library, target)}")


def _device_package(library: str, target: str) -> str:
    """Which of TheRock's device packages holds the archive for `target` (module docstring)."""
    base = target.split(":", 1)[0]
    wheel, bang, member = library.rpartition("!")
    dist = os.path.basename(wheel).split("-", 1)[0].lower() if bang else ""
    parts = (member if bang else library).replace(os.sep, "/").split("/")
    if dist in ("torch", "torchvision") or (not dist and (set(parts) & {"torch", "torchvision"})):
        name = dist or ("torchvision" if "torchvision" in parts else "torch")
        return (f"give the device wheel amd_{name}_device_{base}-*.whl on the same command "
                f"line, or install it (`pip install \"{name}[device-{base}]\"` from the "
                "multi-arch index)")
    if dist.startswith("rocm_sdk") or any(p.startswith("_rocm_sdk") for p in parts):
        return (f"give rocm_sdk_device_{base}-*.whl on the same command line, or install it "
                f"(`pip install \"rocm[device-{base}]\"`)")
    return (f"give the device package for {base} (TheRock's *-device-{base} wheel) on the same "
            "command line, or install it beside the host package")


@dataclass(frozen=True, kw_only=True)
class KpackEntry:
    """One code object in an archive: the binary key, its target and what its header says."""

    key: str
    target: str
    ordinal: int
    offset: int  # of its blob (none) or its zstd frame, in the archive
    size: int  # stored bytes
    check: CodeObjectCheck


@dataclass(frozen=True, kw_only=True)
class KpackArchive:
    """An archive's TOC as read: its targets and every entry, checked."""

    version: int
    group: str
    arches: tuple[str, ...]
    scheme: str
    entries: tuple[KpackEntry, ...]

    def entries_for(self, kernel_name: str) -> tuple[KpackEntry, ...]:
        """The entries a host library with this marker name loads (`name#index`)."""
        prefix = kernel_name + "#"
        return tuple(e for e in self.entries if e.key == kernel_name or e.key.startswith(prefix))

    def bundle(self, entries: tuple[KpackEntry, ...]) -> Bundle:
        """Entries as one pseudo-bundle, so the report counts them like bundle entries."""
        rows: list[Row] = []
        for entry in entries:
            entry_id = parse_entry_id(f"hipv4-{AMDGPU_TRIPLE}--{entry.target}")
            rows.append((entry_id, entry.offset, entry.size, entry.check))
        return Bundle(offset=0, stored_size=0, container="kpack",
                      compression="zstd" if self.scheme == "zstd-per-kernel" else "",
                      rows=tuple(rows), declared_entries=len(rows))  # fmt: skip


def parse_marker(data: bytes) -> KpackRef:
    """Decode a `.rocm_kpack_ref` section. Raises KpackFormatError."""
    msgpack = _msgpack()
    try:
        value = msgpack.unpackb(data, raw=False, strict_map_key=False)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        # ExtraData: upstream's loader stops at the end of the first object; so do we.
        if isinstance(exc, msgpack.ExtraData):
            value = exc.unpacked
        else:
            raise KpackFormatError(f"the marker is not MessagePack ({exc})") from None
    if not isinstance(value, dict):
        raise KpackFormatError(f"the marker is a MessagePack {type(value).__name__}, not a map")
    name = value.get("kernel_name")
    paths = value.get("kpack_search_paths")
    if not isinstance(name, str) or not name:
        raise KpackFormatError("the marker has no kernel_name string")
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
        raise KpackFormatError("the marker has no kpack_search_paths list of strings")
    return KpackRef(kernel_name=name, search_paths=tuple(paths))


def read_archive(source: ByteSource, size: int, names: MachName) -> KpackArchive:
    """Read an archive's header and TOC, and check each entry's code-object header.

    Reads are made in increasing offset order after the TOC (a forward-only source pays one
    pass). Raises KpackFormatError naming what is wrong.
    """
    head = source.read_at(0, HEADER.size)
    if len(head) < HEADER.size:
        raise KpackFormatError(f"{size} bytes: shorter than the 16-byte kpack header")
    magic, version, toc_at = HEADER.unpack(head)
    if magic != MAGIC:
        raise KpackFormatError(f"bad magic {magic!r} (a kpack archive starts with b'KPAK')")
    if version != VERSION:
        raise KpackFormatError(f"format version {version}; this reader knows version {VERSION}")
    if not HEADER.size <= toc_at < size or size - toc_at > _MAX_TOC:
        raise KpackFormatError(
            f"the table of contents offset {toc_at} lies outside the file ({size} bytes): "
            "truncated or overwritten"
        )
    toc = _unpack_toc(source.read_at(toc_at, size - toc_at))
    scheme = toc.get("compression_scheme")
    arches = toc.get("gfx_arches", [])
    table = toc.get("toc")
    if scheme not in ("none", "zstd-per-kernel"):
        raise KpackFormatError(f"unknown compression_scheme {scheme!r}")
    if not isinstance(table, dict) or not isinstance(arches, list):
        raise KpackFormatError("the table of contents lacks its 'toc' map or 'gfx_arches' list")
    wanted: list[tuple[int, str, str, int]] = []  # (ordinal, key, target, original size)
    for key, per_arch in table.items():
        if not isinstance(key, str) or not isinstance(per_arch, dict):
            raise KpackFormatError(f"toc entry {key!r} is not a map of targets")
        for target, meta in per_arch.items():
            ordinal = meta.get("ordinal") if isinstance(meta, dict) else None
            if not isinstance(target, str) or not isinstance(ordinal, int) or ordinal < 0:
                raise KpackFormatError(f"toc entry {key!r} / {target!r} has no ordinal")
            try:
                parse_entry_id(f"hipv4-{AMDGPU_TRIPLE}--{target}")
            except BundleFormatError:
                raise KpackFormatError(f"toc entry {key!r}: {target!r} is not a target ID"
                                       ) from None
            original = meta.get("original_size", 0)
            wanted.append((ordinal, key, target, original if isinstance(original, int) else 0))
    if scheme == "none":
        spans = _blob_spans(toc, size, toc_at)
    else:
        spans = _zstd_spans(source, toc, toc_at, max((w[0] for w in wanted), default=-1))
    entries: list[KpackEntry] = []
    for ordinal, key, target, original in sorted(wanted):
        if ordinal >= len(spans):
            raise KpackFormatError(f"toc entry {key!r} / {target!r}: ordinal {ordinal} has no "
                                   f"blob ({len(spans)} blobs)")  # fmt: skip
        at, stored, prefix = spans[ordinal]
        header: bytes | None
        if scheme == "none":
            header = prefix or source.read_at(at, min(_HEAD, stored))
            limit = stored
        else:
            header = _zstd_head(prefix, key, target)
            limit = original
        entries.append(KpackEntry(key=key, target=target, ordinal=ordinal, offset=at,
                                  size=stored, check=_check(target, header, names, limit)))
    return KpackArchive(version=version, group=str(toc.get("group_name", "")),
                        arches=tuple(str(a) for a in arches), scheme=str(scheme),
                        entries=tuple(entries))  # fmt: skip


def _unpack_toc(data: bytes) -> Mapping[str, object]:
    msgpack = _msgpack()
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=_MAX_TOC)
    unpacker.feed(data)
    try:
        toc = unpacker.unpack()
    except msgpack.OutOfData:
        raise KpackFormatError(
            f"the table of contents ends early ({len(data)} bytes read): truncated"
        ) from None
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise KpackFormatError(f"the table of contents is not MessagePack ({exc})") from None
    if not isinstance(toc, dict):
        raise KpackFormatError("the table of contents is not a MessagePack map")
    return toc


# (offset, stored size, the first bytes when already read: b"" for blobs read on demand)
_Span = tuple[int, int, bytes]


def _blob_spans(toc: Mapping[str, object], size: int, toc_at: int) -> list[_Span]:
    blobs = toc.get("blobs")
    if not isinstance(blobs, list):
        raise KpackFormatError("scheme 'none' without a 'blobs' list")
    spans: list[_Span] = []
    for index, blob in enumerate(blobs):
        at = blob.get("offset") if isinstance(blob, dict) else None
        length = blob.get("size") if isinstance(blob, dict) else None
        if not isinstance(at, int) or not isinstance(length, int):
            raise KpackFormatError(f"blob {index} has no offset/size")
        if at < HEADER.size or at + length > toc_at:
            raise KpackFormatError(f"blob {index} ({length} bytes at {at}) runs outside the "
                                   f"blob area (16..{toc_at}): truncated")  # fmt: skip
        spans.append((at, length, b""))
    return spans


def _zstd_spans(source: ByteSource, toc: Mapping[str, object], toc_at: int,
                last: int) -> list[_Span]:
    """Where each zstd frame lies, from the region's size fields (up to ordinal `last`), with
    its first compressed bytes (read on the same forward pass)."""
    start, length = toc.get("zstd_offset"), toc.get("zstd_size")
    if not isinstance(start, int) or not isinstance(length, int):
        raise KpackFormatError("scheme 'zstd-per-kernel' without zstd_offset/zstd_size")
    end = start + length
    if start < HEADER.size or end > toc_at:
        raise KpackFormatError(f"the zstd region ({length} bytes at {start}) runs outside the "
                               f"blob area (16..{toc_at})")  # fmt: skip
    count_bytes = source.read_at(start, 4)
    if len(count_bytes) < 4:
        raise KpackFormatError("the zstd region is cut before its kernel count")
    (count,) = struct.unpack("<I", count_bytes)
    spans: list[_Span] = []
    at = start + 4
    for index in range(min(count, last + 1)):
        field = source.read_at(at, 4)
        if len(field) < 4:
            raise KpackFormatError(f"zstd frame {index}: its size field is cut")
        (frame,) = struct.unpack("<I", field)
        if at + 4 + frame > end:
            raise KpackFormatError(f"zstd frame {index} ({frame} bytes at {at + 4}) runs past "
                                   f"the zstd region's end ({end})")  # fmt: skip
        spans.append((at + 4, frame, source.read_at(at + 4, min(frame, _ZSTD_PREFIX))))
        at += 4 + frame
    return spans


def _zstd_head(prefix: bytes, key: str, target: str) -> bytes | None:
    """The first 64 bytes a zstd frame inflates to, from its first compressed bytes."""
    import zstandard

    try:
        out = zstandard.ZstdDecompressor().decompressobj().decompress(prefix)
    except zstandard.ZstdError as exc:
        raise KpackFormatError(f"{key} / {target}: the zstd frame is damaged ({exc})") from None
    return out[:_HEAD] if len(out) >= _HEAD else None


def _check(target: str, header: bytes | None, names: MachName, limit: int) -> CodeObjectCheck:
    entry_id = parse_entry_id(f"hipv4-{AMDGPU_TRIPLE}--{target}")  # checked with the TOC
    return check_code_object(entry_id, header, names, size=limit)
