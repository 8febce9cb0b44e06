"""torchaudio's transforms and decoding: on the CPU against references, on the device against
the CPU.

Owns: the fixed, seeded inputs; `lfilter` (a compiled IIR kernel in torchaudio) on the CPU
against the difference equation in float64 Python; `lfilter` and `resample` on the device
against the CPU (TF32 off, so float32 means float32); and decoding a 16-bit PCM WAV that the
standard library's `wave` writes, which must come back as exactly sample / 32768 at its rate.
Decoding needs a backend: since torchaudio 2.9, `torchaudio.load` is an alias of
`load_with_torchcodec` (TorchCodec decodes; pytorch/audio docs/source/torchaudio.rst, 2.9.0),
before that sox/soundfile/ffmpeg (`torchaudio.list_audio_backends()`); without one the part is
not run, and says why.
Must not: import torch or torchaudio at module level (the check hands the modules in).
"""

from __future__ import annotations

import importlib.util
import tempfile
import wave
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from rocmforge.verify.checks.ops import exact_fp32, relative_error

if TYPE_CHECKING:
    from torch import Tensor

# y[n] = (b0 x[n] + b1 x[n-1] + b2 x[n-2] - a1 y[n-1] - a2 y[n-2]) / a0; poles inside the unit
# circle (|p|^2 = 0.2), so float32 rounding does not grow.
B_COEFFS = (0.2, 0.3, 0.1)
A_COEFFS = (1.0, -0.4, 0.2)
TOLERANCE = 1e-4
WAV_RATE = 8000
# torchaudio 2.9 made load() a TorchCodec alias.
TORCHCODEC_FROM = (2, 9)


def signal(torch: ModuleType) -> Tensor:
    gen = torch.Generator().manual_seed(23)
    return torch.randn(2, 4000, generator=gen) * 0.3


def lfilter_reference(rows: list[list[float]]) -> list[list[float]]:
    out = []
    b, a = B_COEFFS, A_COEFFS
    for x in rows:
        y: list[float] = []
        for n in range(len(x)):
            acc = sum(b[k] * x[n - k] for k in range(len(b)) if n - k >= 0)
            acc -= sum(a[k] * y[n - k] for k in range(1, len(a)) if n - k >= 0)
            y.append(acc / a[0])
        out.append(y)
    return out


def _lfilter(torch: ModuleType, torchaudio: ModuleType, x: Tensor) -> Tensor:
    a = torch.tensor(A_COEFFS, dtype=x.dtype, device=x.device)
    b = torch.tensor(B_COEFFS, dtype=x.dtype, device=x.device)
    return torchaudio.functional.lfilter(x, a, b, clamp=False)


def cpu_against_reference(torch: ModuleType, torchaudio: ModuleType
                          ) -> tuple[list[str], dict[str, object]]:
    x = signal(torch)
    got = _lfilter(torch, torchaudio, x)
    want = torch.tensor(lfilter_reference(x.double().tolist()), dtype=torch.float64)
    error = relative_error(torch, got, want)
    problems = [] if error <= TOLERANCE else [
        f"lfilter differs from the difference equation by {error:.3g} (tolerance {TOLERANCE:g})"]
    return problems, {"lfilter_relative_error": error, "tolerance": TOLERANCE}


def device_against_cpu(torch: ModuleType, torchaudio: ModuleType, device: str
                       ) -> tuple[list[str], dict[str, object]]:
    x = signal(torch)
    errors = {}
    with exact_fp32(torch):
        pairs = {
            "lfilter": (_lfilter(torch, torchaudio, x.to(device)), _lfilter(torch, torchaudio, x)),
            "resample_16k_to_8k": (
                torchaudio.functional.resample(x.to(device), 16000, 8000),
                torchaudio.functional.resample(x, 16000, 8000)),
        }
        for name, (got, want) in pairs.items():
            errors[name] = relative_error(torch, got, want)
    problems = [f"{name} on {device} differs from the CPU by {error:.3g} "
                f"(tolerance {TOLERANCE:g})" for name, error in errors.items()
                if not error <= TOLERANCE]
    return problems, {"device": device, "relative_error": errors, "tolerance": TOLERANCE}


def decoder_missing(torchaudio: ModuleType, version: tuple[int, ...]) -> str:
    """Why this torchaudio cannot decode here, or "" when it can try."""
    if version[:2] >= TORCHCODEC_FROM:
        if importlib.util.find_spec("torchcodec") is None:
            return (f"torchaudio {'.'.join(map(str, version))} decodes through TorchCodec "
                    "(torchaudio.load is load_with_torchcodec since 2.9), and torchcodec is not "
                    "installed")
        return ""
    backends = getattr(torchaudio, "list_audio_backends", None)
    if backends is not None and not backends():
        return "torchaudio lists no audio backend (sox, soundfile or ffmpeg) to decode with"
    return ""


def write_wav(path: Path) -> list[int]:
    """A mono 16-bit WAV at WAV_RATE holding a ramp across the whole int16 range; its samples."""
    samples = [((i * 523) % 65536) - 32768 for i in range(1600)]
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(WAV_RATE)
        out.writeframes(b"".join(s.to_bytes(2, "little", signed=True) for s in samples))
    return samples


def decode(torch: ModuleType, torchaudio: ModuleType) -> tuple[list[str], dict[str, object]]:
    with tempfile.TemporaryDirectory(prefix="rocmforge-verify-") as folder:
        path = Path(folder) / "ramp.wav"
        samples = write_wav(path)
        waveform, rate = torchaudio.load(str(path))
    want = torch.tensor(samples, dtype=torch.float64).unsqueeze(0) / 32768.0
    problems = []
    if rate != WAV_RATE:
        problems.append(f"decoded rate {rate}, the file says {WAV_RATE}")
    if tuple(waveform.shape) != tuple(want.shape):
        problems.append(f"decoded shape {tuple(waveform.shape)}, expected {tuple(want.shape)}")
    else:
        error = float((waveform.to(torch.float64) - want).abs().max())
        if error != 0.0:
            problems.append(f"decoded samples differ from the file's by up to {error:.3g}")
    return problems, {"frames": len(samples), "rate": rate}
