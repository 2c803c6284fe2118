"""The built-in sysroot `debian11`: glibc 2.31 and libstdc++ 10 from Debian 11's packages.

Nine packages are all a C++ (and HIP host) compile and link needs. Pinned by
sha256; the pool paths are those of the bullseye point release, which stay
on Debian's mirrors (deb.debian.org) while bullseye is served.
"""

_POOL = "https://deb.debian.org/debian/pool/main/"

_PACKAGES = {
    "g/gcc-10/libgcc-10-dev_10.2.1-6_amd64.deb": "3b711374092b84e732c4e73cf33e02cff02e34a5f105eb6467de8d9038e4cd9d",
    "g/gcc-10/libgcc-s1_10.2.1-6_amd64.deb": "e478f2709d8474165bb664de42e16950c391f30eaa55bc9b3573281d83a29daf",
    "g/gcc-10/libstdc++-10-dev_10.2.1-6_amd64.deb": "20b1f56863dcc5f187d6cb53b2aa6149bd013be4ec67e10c2c31a22fda619a01",
    "g/gcc-10/libstdc++6_10.2.1-6_amd64.deb": "5c155c58935870bf3b4bfe769116841c0d286a74f59eccfd5645693ac23f06b1",
    "g/glibc/libc6-dev_2.31-13+deb11u11_amd64.deb": "e7f7b45d9c5cfcf37609f0b6efd3c645272c812144703af89dfd32218fcb0fd3",
    "g/glibc/libc6_2.31-13+deb11u11_amd64.deb": "05f7264da867b37f4c5ce49266b558ea1e81e05a9464f623152fca70f3550282",
    "l/linux/linux-libc-dev_5.10.223-1_amd64.deb": "e3be603bd12377bb90fcfb0f2048ca3a81c886e49d6f09945b82159d1c54f7b2",
    "libx/libxcrypt/libcrypt-dev_4.4.18-4_amd64.deb": "8b04bf00b8c43360d9ba3adec209db290168ba3526d4aef3175fb84372b1bebf",
    "libx/libxcrypt/libcrypt1_4.4.18-4_amd64.deb": "f617952df0c57b4ee039448e3941bccd3f97bfff71e9b0f87ca6dae15cb3f5ef",
}

DEBIAN11_SYSROOT = "debian11"

# {url: sha256}, the form rocm.sysroot(debs = ...) takes.
DEBIAN11_DEBS = {_POOL + path: sha256 for path, sha256 in _PACKAGES.items()}
