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

# What this repository's wheels claim (manylinux_2_28: RHEL 8, the
# manylinux_2_28 build containers): exp, log, pow and log2 bind to versions
# glibc 2.28 has rather than their 2.29 ones.
DEBIAN11_GLIBC_FLOOR = "2.28"

# The same packages for arm64: the aarch64 twin of `debian11`.
_PACKAGES_AARCH64 = {
    "g/gcc-10/libgcc-10-dev_10.2.1-6_arm64.deb": "80fc73d339ada2e194175afe83cd89014565242153b6e3c2128849d8817da367",
    "g/gcc-10/libgcc-s1_10.2.1-6_arm64.deb": "e2fcdb378d3c1ad1bcb64d4fb6b37aab44011152beca12a4944f435a2582df1f",
    "g/gcc-10/libstdc++-10-dev_10.2.1-6_arm64.deb": "cee7ca63613b50a8a51cc670db385c7e6d1181b72c94148fc8b7992e4570782d",
    "g/gcc-10/libstdc++6_10.2.1-6_arm64.deb": "7869aa540cc46e9f3d4267d5bde2af0e5b429a820c1d6f1a4cfccfe788c31890",
    "g/glibc/libc6-dev_2.31-13+deb11u11_arm64.deb": "28d478134722dcd4b0bd2045a199301d18713bf95947b9fce66634e7aeacab2e",
    "g/glibc/libc6_2.31-13+deb11u11_arm64.deb": "baaa9aa184e2f21738c5819055e6740cc5b22f198e3f416e33f82b40ff6933d8",
    "l/linux/linux-libc-dev_5.10.223-1_arm64.deb": "8b6374a64412d33eac61d74f77b8f932da4b8a707ea8a614791e2a35b8917618",
    "libx/libxcrypt/libcrypt-dev_4.4.18-4_arm64.deb": "5309fdf445acc72794b9d134e9625746ffad2b865c6432abcd08ef097587bde1",
    "libx/libxcrypt/libcrypt1_4.4.18-4_arm64.deb": "22b586b29e840dabebf0bf227d233376628b87954915d064bc142ae85d1b7979",
}

# {url: sha256}, the form rocm.sysroot(debs = ...) takes.
DEBIAN11_DEBS = {_POOL + path: sha256 for path, sha256 in _PACKAGES.items()}
DEBIAN11_AARCH64_DEBS = {_POOL + path: sha256 for path, sha256 in _PACKAGES_AARCH64.items()}
