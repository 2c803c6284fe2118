"""rocm-kpack's own after-the-fact split (ArtifactSplitter, as TheRock runs
it) of one artifact directory: IN holds artifact_manifest.txt and the prefix
directories; OUT gets ref_generic/ (binaries transformed by
kpack_offload_binary) and ref_<gfx>/ (archives). Runs where LLVM's
clang-offload-bundler is (the build root).

argv: IN OUT"""

import glob
import os
import sys
from pathlib import Path

from rocm_kpack.artifact_splitter import ArtifactSplitter
from rocm_kpack.binutils import Toolchain
from rocm_kpack.elf.phdr_manager import ProgramHeaderManager

# rocm-kpack e348328 grows the program header table in place when there is
# room after it, but writes the new entry before raising e_phnum and fails
# ("Invalid program header index"), as on every binary built here. Its
# other way, moving the table to the end of the file, is the one TheRock's
# builds take: report no room, so that way is used.
ProgramHeaderManager._get_available_space = lambda self: 0

bins = sorted(glob.glob("/usr/lib/llvm-*/bin/clang-offload-bundler"), key=lambda p: int(p.split("llvm-")[1].split("/")[0]))
assert bins, "no /usr/lib/llvm-*/bin/clang-offload-bundler: run this in the build root"
llvm = Path(os.path.dirname(bins[-1]))
toolchain = Toolchain(
    clang_offload_bundler=llvm / "clang-offload-bundler",
    objcopy=llvm / "llvm-objcopy",
    objdump=llvm / "llvm-objdump",
    readelf=llvm / "llvm-readelf",
)
ArtifactSplitter("ref", toolchain, verbose=True).split(Path(sys.argv[1]), Path(sys.argv[2]))
