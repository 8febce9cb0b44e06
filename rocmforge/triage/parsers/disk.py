"""A full disk or an exceeded quota or file-size limit, from any tool that reports it.

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Its exact messages with a fixed answer are signatures in
config/diagnostics.toml, under this family's heading. Must not: read files, run programs or
pick between findings (the engine does).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx


def _docker_storage(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="disk",
        cause="no space left on device while Docker unpacked an image layer: the file system "
              "that holds Docker's storage (its data-root, /var/lib/docker unless "
              "daemon.json moves it) ran out of space or of inodes (ROCm images are large and "
              "hold very many files), not the disk of the build inside the container",
        fix="free space in Docker's storage (`docker system df`, `docker system prune`; "
            "`df -h` and `df -i` on the data-root's file system show whether bytes or inodes "
            "ran out), or "
            "move Docker's data-root to a larger file system (\"data-root\" in "
            "/etc/docker/daemon.json, then restart the docker daemon), then pull or build again")


# initramfs-tools' update-initramfs announces the image it writes before mkinitramfs runs.
_GENERATING = re.compile(r"update-initramfs: Generating (?P<image>/\S+)")


def _initramfs_no_space(match: re.Match[str], view: LineView) -> Reading | None:
    images = [m.group("image") for m in map(_GENERATING.search, view.previous) if m]
    if not images:
        return None  # no space while something else wrote: the general disk-full reading
    image = images[-1]
    folder = image.rsplit("/", 1)[0] or "/"
    return Reading(
        subject="disk",
        cause=f"no space left on device while update-initramfs wrote {image}: the file "
              f"system that holds {folder} (often a small separate /boot partition) is full; "
              "a kernel module package such as amdgpu-dkms makes every initramfs larger, "
              "and the old kernels' images are still there",
        fix=f"free space on {folder} (`df -h {folder}`; remove old kernels and their "
            "initrd images with the package manager, e.g. `apt autoremove --purge`), or "
            "enlarge the /boot partition, then rerun `update-initramfs -u` and the "
            "interrupted package configuration (`dpkg --configure -a`)")


def _torch_shm(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="/dev/shm",
        cause=f"PyTorch could not make the shared-memory file {match.group('file')} for a "
              "tensor passed between processes (a DataLoader worker's batch, "
              "torch.multiprocessing, share_memory_()): /dev/shm, the memory-backed file "
              "system it uses, is full or too small; a docker container's /dev/shm is 64 MiB "
              "unless `docker run --shm-size=<size>` made it larger. The disk of the work "
              "dir is not the one that ran out",
        fix="start the container with a larger /dev/shm (`docker run --shm-size=16g ...` or "
            "`--ipc=host`; `df -h /dev/shm` shows its size), or use fewer DataLoader workers "
            "(num_workers=0 needs no shared memory), or "
            "torch.multiprocessing.set_sharing_strategy('file_system'), then run again")


RULES: tuple[Rule, ...] = (
    Rule(id="docker-layer-no-space", klass="disk-full", tier=0,
         triggers=("failed to register layer", "/var/lib/docker/"),
         pattern=rx(r"(?i)(?:failed to register layer: |\S*/var/lib/docker/\S*: ).*no space "
                    r"left on device"),
         read=_docker_storage,
         source="moby/moby@b985e2313a8676e18072b442911fc8f64f17d440:"
         "daemon/internal/distribution/xfer/download.go ('failed to register layer: %v', the "
         "error of unpacking a pulled layer), daemon/config/config_linux.go (data-root "
         "/var/lib/docker); ROCm/ROCm-docker#92"),
    Rule(id="initramfs-no-space", klass="disk-full", tier=0,
         triggers=("No space left on device", "no space left on device"),
         pattern=rx(r"(?i)no space left on device"),
         read=_initramfs_no_space,
         source="Debian initramfs-tools' update-initramfs ('update-initramfs: Generating "
         "<image>' before mkinitramfs writes it; unverified: its source not read here, the "
         "shape as ROCm/rocm-install-on-linux#629's log prints it) and glibc's "
         "strerror(ENOSPC) while it writes; ROCm/rocm-install-on-linux#629"),
    Rule(id="torch-shm-no-space", klass="disk-full", tier=0,
         triggers=("unable to allocate shared memory(shm) for file",),
         pattern=rx(r"unable to allocate shared memory\(shm\) for file <(?P<file>/torch_\S+?)>:"
                    r" No space left on device"),
         read=_torch_shm,
         source="reproduced here: torch 2.13 (CPU) share_memory_() of a 4 MiB tensor with a "
         "64 KiB tmpfs on /dev/shm (tests/failures/make/rv11.sh): 'RuntimeError: unable to "
         "allocate shared memory(shm) for file </torch_<pid>_<n>_0>: No space left on device "
         "(28)'"),
)
