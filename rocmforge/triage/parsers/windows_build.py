"""Windows' own limits as build tools report them: ninja that could not start a build
command's program (CreateProcess found no such file), and pip that could not write a file
whose path passes Windows' path length limit (long path support off).

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does). The shells' "is not recognized" for MSVC's tools is msvc.py's.
Also pip refused a file Windows keeps (WinError 5 or 32) while it replaces a package.
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

_MSVC_TOOLS = frozenset(("cl", "link", "rc", "mt", "lib"))
_ROCM_FOLDER = re.compile(r"(?i)[\\/](?:rocm|hip)[\w.-]*[\\/]|hipcc")


def _first_word(command: str) -> str:
    if command.startswith('"'):
        return command[1:].split('"', 1)[0]
    return command.split(None, 1)[0] if command.split() else ""


def _ninja_program_missing(match: re.Match[str], view: LineView) -> Reading | None:
    # ninja prints "FAILED: <outputs>", the command, then the command's output: for a program
    # CreateProcess could not find, its own line in place of that output.
    if len(view.previous) < 2 or not view.previous[-2].startswith("FAILED: "):
        return None
    path = _first_word(view.previous[-1])
    program = re.sub(r"(?i)\.exe$", "", path.replace("\\", "/").rsplit("/", 1)[-1])
    if not program:
        return None
    if program.lower() in _MSVC_TOOLS:
        return Reading(
            subject="msvc", klass="host-compiler",
            cause=f"ninja could not start {path}: Windows found no such program (CreateProcess "
                  "failed), so the build runs outside the MSVC developer environment it was "
                  "configured in, or that Visual Studio was updated or removed",
            fix="run the build from the x64 Native Tools Command Prompt (or after `vcvarsall.bat "
                "x64`), and configure again from a clean build folder if Visual Studio changed")
    if not _ROCM_FOLDER.search(path):
        return None  # another program: the line does not say whose
    return Reading(
        subject=program,
        cause=f"ninja could not start {path}: Windows found no such program (CreateProcess "
              "failed); the build was configured for a HIP SDK or ROCm folder that does not "
              "hold it now (another release installed, or the folder moved)",
        fix="configure again from a clean build folder with HIP_PATH and ROCM_PATH naming the "
            "installed HIP SDK (its bin folder holds the compilers), or install that release")


def _long_path(match: re.Match[str], view: LineView) -> Reading | None:
    if match.group("part"):
        return Reading(
            subject="long-paths",
            cause="pip could not write a file because one name in its path is longer than the "
                  "255 characters Windows allows for a file or folder name, even with long "
                  "paths enabled",
            fix="install from a shorter source or cache location, or use a release of the "
                "package whose files have shorter names")
    return Reading(
        subject="long-paths",
        cause="pip could not write a file whose full path is longer than Windows' 260-character "
              "limit: long path support is off on this system",
        fix="enable long paths (set LongPathsEnabled to 1 under HKLM\\SYSTEM\\CurrentControlSet\\"
            "Control\\FileSystem, or the group policy 'Enable Win32 long paths'), then open a "
            "new shell and run pip again; or use a shorter folder for the venv")


_SITE_PACKAGE = re.compile(r"(?i)site-packages[\\/]+(?P<pkg>[\w.-]+?)(?:-[\d.]+\.dist-info)?[\\/]")


def _file_held(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path").replace("\\\\", "\\")
    name = re.split(r"[\\/]", path)[-1]
    package = _SITE_PACKAGE.search(path)
    subject = package.group("pkg") if package else name
    held = ("another process has it open (WinError 32)" if match.group("code") == "32" else
            "Windows denied access (WinError 5): a DLL or extension module that a running "
            "Python has loaded cannot be replaced, or the folder is not writable")
    return Reading(
        subject=subject,
        cause=f"pip could not replace {name} while installing: {held}",
        fix="close every Python process that imported the package (Jupyter kernels, IDEs, a "
            "web UI, DataLoader workers), then run pip again; install into a venv you own "
            "rather than a system Python")


RULES: tuple[Rule, ...] = (
    Rule(id="ninja-createprocess-not-found", klass="rocm-install",
         triggers=("CreateProcess failed: The system cannot find the file specified",),
         pattern=rx(r"^CreateProcess failed: The system cannot find the file specified\.$"),
         read=_ninja_program_missing, source="ninja-build/ninja@fc6bb98eee5a9710055cb9fe74375a6"
         "523831e28:src/subprocess-win32.cc (ERROR_FILE_NOT_FOUND: the command's output is "
         "\"CreateProcess failed: The system cannot find the file specified.\"), "
         "src/ninja.cc's \"FAILED: \" line and command before it"),
    Rule(id="pip-windows-long-path", klass="python-packaging",
         triggers=("HINT: This error might",),
         pattern=rx(r"^HINT: This error might (?:have occurred since this system does not have "
                     r"Windows Long Path support enabled|be caused by a file or folder name "
                     r"(?P<part>exceeding 255 characters))"),
         read=_long_path, source="pypa/pip@6d309205789d368b2749d93fd6193d584811efd5:src/pip/"
         "_internal/commands/install.py (create_os_error_message: the two Windows HINT lines "
         "for a name over 255 characters and a path over 260)"),
    Rule(id="pip-windows-file-held", klass="python-packaging",
         triggers=("due to an OSError: [WinError",),
         pattern=rx(r"Could not install packages due to an OSError: \[WinError (?P<code>5|32)\]"
                     r" [^']*'(?P<path>[^']+)'"),
         read=_file_held, source="pypa/pip@6d309205789d368b2749d93fd6193d584811efd5:src/pip/"
         "_internal/commands/install.py (create_os_error_message: \"Could not install packages "
         "due to an OSError: <error>\"); the WinError texts are Windows' (ERROR_ACCESS_DENIED "
         "5, ERROR_SHARING_VIOLATION 32; Microsoft's list not read here)"),
)
